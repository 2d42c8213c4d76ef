import { describe, expect, it } from 'vitest';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  resolveWorkspaceRoot,
  safeIdentifier,
  workspacePath,
} from '../../../src/workspace/paths.js';
import { ensembleSize } from '../../../src/workspace/ensemble.js';
import { truncateOutput } from '../../../src/workspace/output.js';
import { eachCase } from '../../support/cases.js';

describe('workspace paths', () => {
  eachCase('safeIdentifier(%j) = %j', safeIdentifier, [
    ['ENG-1234', 'ENG-1234'],
    ['feat/login', 'feat_login'],
    ['feat:login', 'feat_login'],
    ['a b.c_d-é', 'a_b.c_d-_'],
    ['../x', '.._x'],
  ]);

  it('has no slot suffix for a solo run and one per slot for an ensemble', () => {
    expect(workspacePath('/ws', 'feat/login', 0, 1)).toBe('/ws/feat_login');
    expect(workspacePath('/ws', 'ENG-1', 0, 3)).toBe('/ws/ENG-1/0');
    expect(workspacePath('/ws', 'ENG-1', 2, 3)).toBe('/ws/ENG-1/2');
  });
});

describe('resolveWorkspaceRoot', () => {
  const home = '/home/lorenz';
  const fallback = join(tmpdir(), 'lorenz_workspaces');
  it.each<[string, string | null, NodeJS.ProcessEnv, string, string]>([
    ['default', null, {}, fallback, fallback],
    ['config value', '/srv/ws', {}, '/srv/ws', '/srv/ws'],
    ['env override', '/srv/ws', { LORENZ_WORKSPACE_ROOT: '/env/ws' }, '/env/ws', '/env/ws'],
    ['empty env ignored', '/srv/ws', { LORENZ_WORKSPACE_ROOT: '' }, '/srv/ws', '/srv/ws'],
    ['bare ~', '~', { HOME: home }, home, '~'],
    ['~/x', '~/x/y', { HOME: home }, `${home}/x/y`, '~/x/y'],
    ['~ from USERPROFILE', '~/x', { USERPROFILE: '/users/l' }, '/users/l/x', '~/x'],
    ['whole $VAR', '$WS_ROOT', { WS_ROOT: '/var/ws' }, '/var/ws', '$WS_ROOT'],
    ['$HOME whole', '$HOME', { HOME: home }, home, '$HOME'],
    ['$HOME/work stays literal', '$HOME/work', { HOME: home }, '$HOME/work', '$HOME/work'],
    ['~user stays literal', '~other/x', { HOME: home }, '~other/x', '~other/x'],
    ['unset $VAR falls back', '$NOPE', {}, fallback, fallback],
    ['env ~ expands', null, { LORENZ_WORKSPACE_ROOT: '~/w', HOME: home }, `${home}/w`, '~/w'],
  ])('%s', (_name, configRoot, env, root, rootExpression) => {
    expect(resolveWorkspaceRoot(configRoot, env)).toEqual({ root, rootExpression });
  });
});

describe('ensembleSize', () => {
  it.each<[string[], number, number]>([
    [[], 1, 1],
    [[], 4, 4],
    [['ensemble:3'], 1, 3],
    [['bug', 'ensemble:2', 'ensemble:5'], 1, 2],
    [['ensemble:0', 'ensemble:abc', 'ensemble:101', 'ensemble:7'], 1, 7],
    [['ensemble:0'], 2, 2],
    [['ensemble:101'], 1, 1],
    [['ensemble:100'], 1, 100],
    [['ensemble:1'], 3, 1],
    [['ensemble: 3', 'x-ensemble:3', 'ensemble:3x'], 1, 1],
  ])('labels %j with configured %d → %d', (labels, configured, size) => {
    expect(ensembleSize({ labels }, configured)).toBe(size);
  });
});

describe('truncateOutput', () => {
  it('keeps exactly 4096 characters untouched', () => {
    const text = 'x'.repeat(4096);
    expect(truncateOutput(text)).toEqual({ text, truncated: false });
  });

  it('cuts 4097 characters to 4096 plus the suffix', () => {
    const result = truncateOutput(`${'x'.repeat(4096)}y`);
    expect(result).toEqual({ text: `${'x'.repeat(4096)}\n[truncated 1 chars]`, truncated: true });
  });

  it('counts code points, never splitting a surrogate pair', () => {
    const result = truncateOutput('😀'.repeat(4100));
    expect(result.text).toBe(`${'😀'.repeat(4096)}\n[truncated 4 chars]`);
    expect(truncateOutput('😀'.repeat(4096)).truncated).toBe(false);
  });
});
