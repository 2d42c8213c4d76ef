import { shellEscape } from '../../template/shell-escape.js';

/**
 * What of a command's environment reaches the worker. The environment the engine hands an
 * executor is this machine's (process.env) with Lorenz's own variables on top: shipping it
 * whole would leak the orchestrator's secrets to the host and clobber the host's own HOME,
 * PATH and locale. So only what differs from `base` (the environment Lorenz started with)
 * goes: a Workflow's `agents.<kind>.env`, git's GIT_TERMINAL_PROMPT, and so on. A PATH that
 * extends base's PATH goes as its added prefix before the worker's own `$PATH`; variables
 * that describe this machine (HOME, USER, PWD…) never go.
 *
 * The result is shell text run inside the worker's login shell, after its profile, so a
 * profile that resets PATH does not undo the prefix.
 */
const MACHINE_VARIABLES = new Set([
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'PWD',
  'OLDPWD',
  'SHLVL',
  '_',
  'HOSTNAME',
  'TMPDIR',
  'SSH_AUTH_SOCK',
  'SSH_CONNECTION',
  'SSH_CLIENT',
  'SSH_TTY',
]);

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function remoteExports(env: NodeJS.ProcessEnv | undefined, base: NodeJS.ProcessEnv): string {
  if (env === undefined) return '';
  const lines: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || value === base[name]) continue;
    if (!NAME.test(name) || MACHINE_VARIABLES.has(name)) continue;
    if (name === 'PATH') {
      lines.push(`export PATH=${pathValue(value, base.PATH)}`);
      continue;
    }
    lines.push(`export ${name}=${shellEscape(value)}`);
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/** `prefix:$PATH` when value extends the base PATH; else the value as Lorenz set it. */
function pathValue(value: string, basePath: string | undefined): string {
  if (basePath && value.endsWith(`:${basePath}`)) {
    const prefix = value.slice(0, -basePath.length - 1);
    return `${shellEscape(prefix)}:"$PATH"`;
  }
  return shellEscape(value);
}
