// A claim restored from a snapshot (docs/snapshots.md): the runner checks the prepared tree's
// digest before any hook and makes it the workspace, so after_create does not run
// again and before_run does; a tree that is not the one recorded never sees a hook.
import { chmod, mkdir, readFile, symlink, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SOURCE_TREE_DIR } from '../../../src/api/workspace-source.js';
import { parseRunnerArgs } from '../../../src/runner/main.js';
import { restoreSnapshotWorkspace } from '../../../src/runner/snapshot-restore.js';
import { parseTerminationSummary } from '../../../src/runner/summary.js';
import { workspaceTreeDigest } from '../../../src/workspace/tree-digest.js';
import { tempDirPerTest } from '../../support/temp-dir.js';
import { runInPod, writeRunInputs } from './run-inputs.js';

const dir = tempDirPerTest('lorenz-restore-');
const root = () => join(dir(), 'ws');
const source = () => join(root(), SOURCE_TREE_DIR);
const workspace = () => join(root(), 'ENG-7');

/** A prepared tree as a warm-up leaves it: the setup's marker, a script, a link. */
async function preparedTree(): Promise<string> {
  await mkdir(join(source(), 'node_modules', 'dep'), { recursive: true });
  await writeFile(join(source(), 'node_modules', 'dep', 'index.js'), 'module.exports = 1;\n');
  await writeFile(join(source(), 'setup-done'), 'prepared\n');
  await writeFile(join(source(), 'build.sh'), '#!/bin/sh\necho build\n', { mode: 0o755 });
  await symlink('node_modules/dep/index.js', join(source(), 'entry.js'));
  return (await workspaceTreeDigest(source())).digest;
}

const WORKFLOW = `---
hooks:
  timeout_ms: 5000
  after_create: echo after_create >> "$LOG"
  before_run: test -f setup-done && echo before_run >> "$LOG"
---
Work on {{ issue.identifier }}`;

async function runFromSnapshot(digest: string) {
  const inputsDir = await writeRunInputs(join(dir(), 'inputs'), WORKFLOW, { title: 't' });
  const log = join(dir(), 'log.txt');
  await writeFile(log, '');
  const { code, events } = await runInPod(dir(), {
    inputsDir,
    noAgent: true,
    keepWorkspace: true,
    sourceDigest: digest,
    env: { ...process.env, LOG: log },
  });
  const summary = parseTerminationSummary(await readFile(join(dir(), 'termination-log'), 'utf8'));
  return {
    code,
    events,
    summary,
    hooksRan: (await readFile(log, 'utf8')).split('\n').filter(Boolean),
  };
}

/** Ways the restored tree can differ from the one the digest was recorded for. */
const tamperings: [string, () => Promise<void>][] = [
  ['a file changed', () => writeFile(join(source(), 'setup-done'), 'tampered\n')],
  ['a file added', () => writeFile(join(source(), 'extra'), '')],
  ['a mode flipped', () => chmod(join(source(), 'build.sh'), 0o644)],
  [
    'a symlink retargeted',
    async () => {
      await unlink(join(source(), 'entry.js'));
      await symlink('build.sh', join(source(), 'entry.js'));
    },
  ],
];

describe('lorenz runner: a workspace restored from a snapshot', () => {
  it('checks the digest, makes the tree the workspace, skips after_create and runs before_run', async () => {
    const digest = await preparedTree();
    const { code, events, hooksRan } = await runFromSnapshot(digest);
    expect(code).toBe(0);
    expect(hooksRan).toEqual(['before_run']);
    const restored = events.find((event) => event.type === 'workspace_restored');
    expect(restored?.message).toMatchObject({ path: workspace(), digest, files: 3, slot: 0 });
    const prepared = events.find((event) => event.type === 'workspace_prepared');
    expect(prepared?.message).toMatchObject({ path: workspace(), created: false });
    expect(await readFile(join(workspace(), 'setup-done'), 'utf8')).toBe('prepared\n');
    await expect(readFile(join(source(), 'setup-done'))).rejects.toThrow(/ENOENT/);
  });

  it('a later attempt on the same claim reuses the workspace without checking again', async () => {
    const digest = await preparedTree();
    expect((await runFromSnapshot(digest)).code).toBe(0);
    await writeFile(join(workspace(), 'agent-wrote'), 'work\n');
    const again = await runFromSnapshot(digest);
    expect(again.code).toBe(0);
    expect(again.events.some((event) => event.type === 'workspace_restored')).toBe(false);
    expect(again.hooksRan).toEqual(['before_run']);
  });

  it.each(tamperings)(
    '%s: snapshot_digest_mismatch before any hook, nothing moved',
    async (_what, tamper) => {
      const digest = await preparedTree();
      await tamper();
      const { code, summary, hooksRan, events } = await runFromSnapshot(digest);
      expect(code).toBe(1);
      expect(hooksRan).toEqual([]);
      expect(events.some((event) => event.type === 'hook_execution')).toBe(false);
      expect(summary).toMatchObject({ succeeded: false, errorCode: 'snapshot_digest_mismatch' });
      expect(summary?.error).toContain(`its snapshot was recorded with ${digest}`);
      await expect(readFile(join(workspace(), 'setup-done'))).rejects.toThrow(/ENOENT/);
    },
  );

  it('a symlink escaping the tree fails workspace_tree_symlink_escapes before any hook', async () => {
    await preparedTree();
    await symlink('../../etc/passwd', join(source(), 'escape'));
    const { code, summary, hooksRan } = await runFromSnapshot(`sha256:${'0'.repeat(64)}`);
    expect(code).toBe(1);
    expect(hooksRan).toEqual([]);
    expect(summary).toMatchObject({ errorCode: 'workspace_tree_symlink_escapes' });
  });

  it('a volume with no prepared tree fails snapshot_tree_missing before any hook', async () => {
    const { code, summary, hooksRan } = await runFromSnapshot(`sha256:${'0'.repeat(64)}`);
    expect(code).toBe(1);
    expect(hooksRan).toEqual([]);
    expect(summary).toMatchObject({ errorCode: 'snapshot_tree_missing' });
    expect(summary?.error).toContain(`no ${SOURCE_TREE_DIR}/`);
  });

  it('restoreSnapshotWorkspace nests an ensemble slot under the issue directory', async () => {
    const digest = await preparedTree();
    const slotWorkspace = join(root(), 'ENG-7', '1');
    const result = await restoreSnapshotWorkspace({
      root: root(),
      workspace: slotWorkspace,
      expectedDigest: digest,
    });
    expect(result).toMatchObject({ kind: 'restored', digest });
    expect(await readFile(join(slotWorkspace, 'setup-done'), 'utf8')).toBe('prepared\n');
  });

  it('--source-digest must be a sha256 digest', () => {
    expect(parseRunnerArgs(['--source-digest', `sha256:${'a'.repeat(64)}`]).sourceDigest).toBe(
      `sha256:${'a'.repeat(64)}`,
    );
    expect(() => parseRunnerArgs(['--source-digest', 'md5:abc'])).toThrow(
      '--source-digest: not a sha256:<64 hex> digest: md5:abc',
    );
  });
});
