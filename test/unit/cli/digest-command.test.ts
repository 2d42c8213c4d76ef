// `lorenz workspace digest DIR`: the digest a snapshot source names, as the runner checks it.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { workspaceTreeDigest } from '../../../src/workspace/tree-digest.js';
import { CLI_BINS, runCli } from '../../support/cli-bins.js';
import { tempDirPerTest } from '../../support/temp-dir.js';

const dir = tempDirPerTest('lorenz-digest-cli-');

async function prepared(): Promise<string> {
  const tree = join(dir(), '.lorenz-source');
  await mkdir(join(tree, 'src'), { recursive: true });
  await writeFile(join(tree, 'src', 'a.js'), 'export {};\n');
  await writeFile(join(tree, 'run.sh'), '#!/bin/sh\n', { mode: 0o755 });
  return tree;
}

describe.each(CLI_BINS)('lorenz workspace digest ($name)', (bin) => {
  it("prints the tree's digest, the same the runner computes", async () => {
    const tree = await prepared();
    const result = runCli(bin, ['workspace', 'digest', tree], dir());
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`${(await workspaceTreeDigest(tree)).digest}\n`);
  });

  it('--json says what was read', async () => {
    const tree = await prepared();
    const result = runCli(bin, ['workspace', 'digest', '--json', tree], dir());
    expect(JSON.parse(result.stdout)).toMatchObject({ files: 2, dirs: 1, links: 0 });
  });

  it('a missing directory fails with the code and the path', () => {
    const result = runCli(bin, ['workspace', 'digest', join(dir(), 'nope')], dir());
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('invalid_workspace_cwd');
    expect(result.stderr).toContain(join(dir(), 'nope'));
  });

  it('no directory is a usage error', () => {
    const result = runCli(bin, ['workspace', 'digest'], dir());
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('give one directory');
  });
});
