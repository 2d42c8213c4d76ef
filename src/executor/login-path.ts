import { shellEscape } from '../template/shell-escape.js';

/**
 * Directories Lorenz puts first on a command's PATH (the git guard's wrapper). Every command
 * runs as `bash -lc <command>`, and a login shell reads /etc/profile and ~/.profile (or
 * ~/.bash_profile) before the command: Debian's /etc/profile sets PATH outright, and so may
 * a user's profile, so a prefix handed in the environment is gone by the time the command
 * runs. The prefix is therefore the command's first statement, after every startup file:
 * the command itself still runs in the login shell, on the same line (its line numbers and
 * `$0` as before), with the PATH the profile made kept after Lorenz's directories.
 */
export function withPathFirst(command: string, directories: readonly string[] = []): string {
  if (directories.length === 0) return command;
  return `${pathFirstStatement(directories)}; ${command}`;
}

/** `export PATH=<dirs>:$PATH` as shell text (no PATH at all: the directories alone). */
export function pathFirstStatement(directories: readonly string[]): string {
  return `export PATH=${shellEscape(directories.join(':'))}"\${PATH:+:$PATH}"`;
}

/** Why a directory cannot be a PATH entry (a `:` splits it in two), or null. */
export function unusablePathEntry(directory: string): string | null {
  if (directory.includes(':')) return `${JSON.stringify(directory)} contains ':'`;
  if (!directory.startsWith('/')) return `${JSON.stringify(directory)} is not absolute`;
  return null;
}
