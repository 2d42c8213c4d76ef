// The `local` tracker: a board of Markdown issue files, read from real files in a temp
// directory (and from a ConfigMap-style map), and written through a temp file and a rename.
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import {
  appendLocalIssueComment,
  createLocalTracker,
  localBoardDirectory,
  parseLocalIssue,
  setLocalIssueStatus,
} from '../../../src/tracker/local/index.js';
import { parseConfig } from '../../../src/workflow/config.js';
import { failureOf } from '../../support/lorenz-errors.js';
import { localBoardPerTest } from './local-board.js';

const { root, board } = localBoardPerTest('local-board-');

const write = (name: string, text: string) => fs.writeFile(join(board(), name), text);
const ids = (issues: readonly { identifier: string }[]) => issues.map((issue) => issue.identifier);

const TODO = `---
status: Todo
labels: [Backend, " UI "]
priority: 2
created_at: 2026-01-02T03:04:05Z
---
# Fix the login redirect

Users land on /home after logging in.

Second paragraph.
`;

describe('reading a board directory', () => {
  it('reads an issue file: front matter, title, description', async () => {
    await write('BOARD-1.md', TODO);
    const [issue] = await createLocalTracker({ directory: board() }).fetchCandidates();
    expect(issue).toEqual({
      id: 'BOARD-1',
      identifier: 'BOARD-1',
      title: 'Fix the login redirect',
      description: 'Users land on /home after logging in.\n\nSecond paragraph.',
      priority: 2,
      state: 'Todo',
      state_type: null,
      branch_name: null,
      url: null,
      assignee_id: null,
      blocked_by: [],
      labels: ['backend', 'ui'],
      assigned_to_worker: true,
      created_at: '2026-01-02T03:04:05.000Z',
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as unknown,
    });
  });

  it('uses the file mtime when the front matter has no times', async () => {
    await write('BOARD-2.md', '---\nstatus: todo\n---\n# T\n');
    const when = new Date('2025-05-05T05:05:05.000Z');
    await fs.utimes(join(board(), 'BOARD-2.md'), when, when);
    const [issue] = await createLocalTracker({ directory: board() }).fetchCandidates();
    expect(issue?.created_at).toBe(when.toISOString());
    expect(issue?.updated_at).toBe(when.toISOString());
    // The configured spelling of the state, whatever the file's case.
    expect(issue?.state).toBe('Todo');
  });

  it('takes the id as the title when there is no # heading', async () => {
    await write('BOARD-3.md', '---\nstatus: Todo\n---\nJust a description.\n');
    const [issue] = await createLocalTracker({ directory: board() }).fetchCandidates();
    expect(issue?.title).toBe('BOARD-3');
    expect(issue?.description).toBe('Just a description.');
  });

  it('ignores other files, directories, symlinks and temp files', async () => {
    await write('BOARD-1.md', TODO);
    await write('README.md', TODO);
    await write('BOARD-x.md', TODO);
    await write('BOARD-4.txt', TODO);
    await write('board-5.md', TODO);
    await write('.BOARD-1.md.1234.tmp', TODO);
    await fs.mkdir(join(board(), 'BOARD-6.md'));
    await fs.symlink(join(board(), 'BOARD-1.md'), join(board(), 'BOARD-7.md'));
    const warn = vi.fn();
    const tracker = createLocalTracker({ directory: board(), onWarning: warn });
    expect(ids(await tracker.fetchCandidates())).toEqual(['BOARD-1']);
    expect(warn).not.toHaveBeenCalled();
  });

  it('reads a missing directory as an empty board', async () => {
    const tracker = createLocalTracker({ directory: join(root(), 'nope') });
    expect(await tracker.fetchCandidates()).toEqual([]);
    expect(await tracker.fetchByIds(['BOARD-1'])).toEqual([]);
  });

  it('refuses a path that is a file', async () => {
    await write('BOARD-1.md', TODO);
    const error = await failureOf(
      createLocalTracker({ directory: join(board(), 'BOARD-1.md') }).fetchCandidates(),
    );
    expect(error.code).toBe('invalid_tracker_config');
  });

  it('counts unknown and missing statuses as backlog', async () => {
    await write('BOARD-1.md', '---\nstatus: Someday\n---\n# A\n');
    await write('BOARD-2.md', '# No front matter at all\n');
    await write('BOARD-3.md', '---\nstatus: In Progress\n---\n# C\n');
    const tracker = createLocalTracker({ directory: board() });
    expect(ids(await tracker.fetchCandidates())).toEqual(['BOARD-3']);
    const backlog = await tracker.fetchByStates(['backlog']);
    expect(backlog.map((issue) => [issue.identifier, issue.state, issue.state_type])).toEqual([
      ['BOARD-1', 'Backlog', 'backlog'],
      ['BOARD-2', 'Backlog', 'backlog'],
    ]);
  });

  it('drops a malformed file with a warning and reads the rest', async () => {
    await write('BOARD-1.md', TODO);
    await write('BOARD-2.md', '---\nstatus: [Todo\n---\n# Broken YAML\n');
    await write('BOARD-3.md', '---\nstatus: Todo\nlabels: backend\n---\n# Labels not a list\n');
    await write('BOARD-4.md', '---\n- a list\n---\n# Not a map\n');
    await write('BOARD-5.md', '---\nstatus: Todo\npriority: 9\n---\n# Bad priority\n');
    await write(
      'BOARD-6.md',
      '---\na: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nstatus: Todo\n---\n# Alias bomb\n',
    );
    await write('BOARD-7.md', '---\nstatus: Todo\ncreated_at: yesterday\n---\n# Bad time\n');
    const warnings: string[] = [];
    const tracker = createLocalTracker({ directory: board(), onWarning: (m) => warnings.push(m) });
    expect(ids(await tracker.fetchCandidates())).toEqual(['BOARD-1']);
    expect(warnings).toHaveLength(6);
    expect(warnings.join('\n')).toMatch(/BOARD-2\.md: skipped, front matter line \d+/);
    expect(warnings.join('\n')).toMatch(/BOARD-3\.md: skipped, labels must be a list of strings/);
    expect(warnings.join('\n')).toMatch(/BOARD-4\.md: skipped, front matter must be a map/);
    expect(warnings.join('\n')).toMatch(/BOARD-6\.md: skipped, .*alias/);
    expect(warnings.join('\n')).toMatch(/BOARD-7\.md: skipped, created_at/);
  });

  it('resolves blockers against the board', async () => {
    await write(
      'BOARD-1.md',
      '---\nstatus: Todo\nblocked_by: [BOARD-2, BOARD-3, BOARD-9]\n---\n# A\n',
    );
    await write('BOARD-2.md', '---\nstatus: done\n---\n# B\n');
    await write('BOARD-3.md', '---\nstatus: later\n---\n# C\n');
    const [issue] = await createLocalTracker({ directory: board() }).fetchByIds(['BOARD-1']);
    expect(issue?.blocked_by).toEqual([
      { id: 'BOARD-2', identifier: 'BOARD-2', state: 'Done', state_type: null },
      { id: 'BOARD-3', identifier: 'BOARD-3', state: 'Backlog', state_type: 'backlog' },
      { id: 'BOARD-9', identifier: 'BOARD-9', state: null, state_type: null },
    ]);
  });

  it('fetches by ids and by states, in id order', async () => {
    for (const n of [10, 2, 1]) await write(`BOARD-${n}.md`, TODO);
    await write('BOARD-3.md', '---\nstatus: Done\n---\n# Done\n');
    const tracker = createLocalTracker({ directory: board() });
    expect(ids(await tracker.fetchCandidates())).toEqual(['BOARD-1', 'BOARD-2', 'BOARD-10']);
    expect(ids(await tracker.fetchByIds(['BOARD-10', 'BOARD-3', 'BOARD-99']))).toEqual([
      'BOARD-3',
      'BOARD-10',
    ]);
    expect(ids(await tracker.fetchByStates([' DONE ']))).toEqual(['BOARD-3']);
    expect(await tracker.fetchByStates([])).toEqual([]);
  });

  it('reads the comments section and keeps it out of the description', async () => {
    const text = `${TODO}
<!-- lorenz:comments -->
## Comments

- 2026-01-03T00:00:00.000Z agent: Started on it.
- 2026-01-03T01:00:00.000Z agent: Opened a PR: https://example.test/pr/1
`;
    const parsed = parseLocalIssue('BOARD-1', text);
    expect(parsed.ok && parsed.file.comments).toEqual([
      { at: '2026-01-03T00:00:00.000Z', author: 'agent', text: 'Started on it.' },
      {
        at: '2026-01-03T01:00:00.000Z',
        author: 'agent',
        text: 'Opened a PR: https://example.test/pr/1',
      },
    ]);
    expect(parsed.ok && parsed.file.description).toBe(
      'Users land on /home after logging in.\n\nSecond paragraph.',
    );
  });
});

describe('settings', () => {
  it('uses tracker.path with ~ and $VAR expanded, relative to the working directory', async () => {
    const config = parseConfig({ tracker: { kind: 'local' } }).config.tracker;
    expect(localBoardDirectory(config, { cwd: root(), env: {} })).toBe(
      join(root(), '.lorenz/local'),
    );
    expect(localBoardDirectory({ path: '~/b' }, { env: { HOME: root() } })).toBe(join(root(), 'b'));
    expect(localBoardDirectory({ path: '$BOARD' }, { env: { BOARD: board() } })).toBe(board());
    await fs.mkdir(join(root(), '.lorenz/local'), { recursive: true });
    await fs.writeFile(join(root(), '.lorenz/local/BOARD-1.md'), TODO);
    const tracker = createLocalTracker({ config, cwd: root(), env: {} });
    expect(ids(await tracker.fetchCandidates())).toEqual(['BOARD-1']);
  });

  it('refuses an unset $VAR path', () => {
    expect(() => createLocalTracker({ config: { path: '$NOPE' }, env: {} })).toThrow(
      expect.objectContaining({ code: 'invalid_tracker_config' }),
    );
  });

  it.each(['', '-X', 'a/b', '../', 'A B', 'A.'])('refuses the id prefix %j', (prefix) => {
    expect(() => createLocalTracker({ directory: board(), config: { idPrefix: prefix } })).toThrow(
      expect.objectContaining({ code: 'invalid_tracker_config' }),
    );
  });

  it('reads files with another prefix', async () => {
    await write('ENG_7.md', TODO);
    await write('BOARD-1.md', TODO);
    const tracker = createLocalTracker({ directory: board(), config: { idPrefix: 'ENG_' } });
    expect(ids(await tracker.fetchCandidates())).toEqual(['ENG_7']);
  });
});

describe('a board from a ConfigMap-style map', () => {
  it('reads file name → text with the same rules, times from the front matter only', async () => {
    const warnings: string[] = [];
    const tracker = createLocalTracker({
      files: {
        'BOARD-1.md': TODO,
        'BOARD-2.md': '---\nstatus: Todo\n---\n# Two\n',
        'BOARD-3.md': '---\nstatus: [\n---\n',
        'notes.txt': 'ignored',
      },
      onWarning: (message) => warnings.push(message),
    });
    const issues = await tracker.fetchCandidates();
    expect(ids(issues)).toEqual(['BOARD-1', 'BOARD-2']);
    expect(issues[0]?.created_at).toBe('2026-01-02T03:04:05.000Z');
    expect(issues[1]?.created_at).toBeNull();
    expect(warnings).toEqual([expect.stringMatching(/^BOARD-3\.md: skipped/)]);
  });
});

describe('writes', () => {
  const location = () => ({ directory: board(), idPrefix: 'BOARD-' });

  it('sets the status, keeping the other keys, comments and the body', async () => {
    const text =
      '---\n# why: triaged\nstatus: Todo # was Backlog\nlabels: [a]\n---\n# T\n\nBody.\n';
    await write('BOARD-1.md', text);
    await setLocalIssueStatus(location(), 'BOARD-1', 'In Progress');
    const after = await fs.readFile(join(board(), 'BOARD-1.md'), 'utf8');
    expect(after).toContain('# why: triaged');
    expect(after).toContain('labels: [ a ]');
    expect(after).toContain('status: In Progress');
    expect(after.endsWith('---\n# T\n\nBody.\n')).toBe(true);
    const [issue] = await createLocalTracker({ directory: board() }).fetchByIds(['BOARD-1']);
    expect(issue?.state).toBe('In Progress');
  });

  it('adds front matter to a file without it', async () => {
    await write('BOARD-1.md', '# T\n');
    await setLocalIssueStatus(location(), 'BOARD-1', 'Done');
    expect(await fs.readFile(join(board(), 'BOARD-1.md'), 'utf8')).toBe(
      '---\nstatus: Done\n---\n# T\n',
    );
  });

  it('appends comments, opening the section on the first one', async () => {
    await write('BOARD-1.md', TODO);
    let clock = Date.parse('2026-02-01T00:00:00.000Z');
    const now = () => new Date((clock += 1000));
    await appendLocalIssueComment(location(), 'BOARD-1', 'Started.', now);
    await appendLocalIssueComment(location(), 'BOARD-1', '  Two\nlines  ', now);
    const after = await fs.readFile(join(board(), 'BOARD-1.md'), 'utf8');
    expect(after).toBe(
      `${TODO}\n<!-- lorenz:comments -->\n## Comments\n\n` +
        '- 2026-02-01T00:00:01.000Z agent: Started.\n' +
        '- 2026-02-01T00:00:02.000Z agent: Two lines\n',
    );
    const parsed = parseLocalIssue('BOARD-1', after);
    expect(parsed.ok && parsed.file.comments.map((c) => c.text)).toEqual(['Started.', 'Two lines']);
    expect(parsed.ok && parsed.file.description).toBe(
      'Users land on /home after logging in.\n\nSecond paragraph.',
    );
  });

  it('writes through a temp file and a rename, leaving no temp file behind', async () => {
    await write('BOARD-1.md', TODO);
    const before = await fs.stat(join(board(), 'BOARD-1.md'));
    const renames: [string, string][] = [];
    const rename = fs.rename.bind(fs);
    const spy = vi.spyOn(fs, 'rename').mockImplementation(async (from, to) => {
      renames.push([String(from), String(to)]);
      await rename(from, to);
    });
    try {
      await setLocalIssueStatus(location(), 'BOARD-1', 'Done');
    } finally {
      spy.mockRestore();
    }
    expect(renames).toHaveLength(1);
    const [from, to] = renames[0] ?? ['', ''];
    expect(to).toBe(join(board(), 'BOARD-1.md'));
    expect(from).toMatch(/\/\.BOARD-1\.md\.[0-9a-f-]+\.tmp$/);
    expect(await fs.readdir(board())).toEqual(['BOARD-1.md']);
    // A rename replaces the file: a new inode, the old one never half-written.
    expect((await fs.stat(join(board(), 'BOARD-1.md'))).ino).not.toBe(before.ino);
  });

  it('cleans up the temp file when the rename fails', async () => {
    await write('BOARD-1.md', TODO);
    const spy = vi
      .spyOn(fs, 'rename')
      .mockRejectedValue(Object.assign(new Error('x'), { code: 'EXDEV' }));
    try {
      const error = await failureOf(setLocalIssueStatus(location(), 'BOARD-1', 'Done'));
      expect(error.code).toBe('tracker_request');
    } finally {
      spy.mockRestore();
    }
    expect(await fs.readdir(board())).toEqual(['BOARD-1.md']);
    expect(await fs.readFile(join(board(), 'BOARD-1.md'), 'utf8')).toBe(TODO);
  });

  it('refuses unknown ids, path-like ids and malformed files', async () => {
    await write('BOARD-2.md', '---\nstatus: [\n---\n');
    expect((await failureOf(setLocalIssueStatus(location(), 'BOARD-1', 'Done'))).code).toBe(
      'tracker_status',
    );
    expect((await failureOf(setLocalIssueStatus(location(), '../BOARD-1', 'Done'))).code).toBe(
      'tracker_status',
    );
    expect((await failureOf(appendLocalIssueComment(location(), 'BOARD-2', 'x'))).code).toBe(
      'tracker_response',
    );
    expect(await fs.readFile(join(board(), 'BOARD-2.md'), 'utf8')).toBe('---\nstatus: [\n---\n');
  });
});
