import type { Executor } from '../types.js';
import type { SshConnection } from './connection.js';
import { callScript, type CallResult } from './remote-call.js';
import {
  ENSURE_DIRECTORY_SCRIPT,
  HOME_SCRIPT,
  PATH_KIND_SCRIPT,
  READ_FILE_SCRIPT,
  REALPATH_SCRIPT,
  REMOVE_EMPTY_DIRECTORY_SCRIPT,
  REMOVE_TREE_SCRIPT,
  WRITE_FILE_SCRIPT,
} from './scripts.js';

/**
 * The executor's file operations on the worker, each a short script on its own channel
 * (one round trip; no SFTP subsystem needed on the host). Paths are positional arguments.
 */
export type RemoteFiles = Pick<
  Executor,
  | 'ensureDirectory'
  | 'realpath'
  | 'pathKind'
  | 'removeTree'
  | 'removeEmptyDirectory'
  | 'writeFile'
  | 'readFile'
  | 'homeDirectory'
>;

const KINDS = ['missing', 'directory', 'file', 'symlink', 'other'] as const;
type Kind = (typeof KINDS)[number];
const isKind = (text: string): text is Kind => (KINDS as readonly string[]).includes(text);

function failed(what: string, path: string, result: CallResult): Error {
  const detail = result.stderr.trim() || `exit status ${result.status}`;
  return new Error(`${what} ${path} on the worker failed: ${detail}`);
}

function errno(code: string, message: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(message);
  error.code = code;
  return error;
}

export function createRemoteFiles(connection: SshConnection, timeoutMs: number): RemoteFiles {
  const call = (script: string, args: string[], input?: string) =>
    callScript(connection, script, args, { timeoutMs, ...(input === undefined ? {} : { input }) });
  const text = (result: CallResult) => result.stdout.toString('utf8');
  let home: Promise<string> | undefined;
  return {
    ensureDirectory: async (path) => {
      const result = await call(ENSURE_DIRECTORY_SCRIPT, [path]);
      if (result.status !== 0) throw failed('mkdir -p', path, result);
      return text(result).trim() === 'created';
    },
    realpath: async (path) => {
      const result = await call(REALPATH_SCRIPT, [path]);
      if (result.status === 2)
        throw errno('ENOENT', `ENOENT: no such file or directory, realpath '${path}'`);
      if (result.status !== 0) throw failed('realpath', path, result);
      return text(result).replace(/\n$/, '');
    },
    pathKind: async (path) => {
      const result = await call(PATH_KIND_SCRIPT, [path]);
      const kind = text(result).trim();
      if (result.status !== 0 || !isKind(kind)) throw failed('lstat', path, result);
      return kind;
    },
    removeTree: async (path) => {
      // Unbounded: removing a big tree may take longer than any file operation should.
      const result = await callScript(connection, REMOVE_TREE_SCRIPT, [path]);
      if (result.status !== 0) throw failed('rm -rf', path, result);
    },
    removeEmptyDirectory: async (path) => {
      const result = await call(REMOVE_EMPTY_DIRECTORY_SCRIPT, [path]);
      return text(result).trim() === 'removed';
    },
    writeFile: async (path, content, options) => {
      const mode = options?.mode === undefined ? '' : options.mode.toString(8);
      const result = await call(WRITE_FILE_SCRIPT, [path, mode], content);
      if (result.status !== 0) throw failed('write', path, result);
    },
    readFile: async (path) => {
      const result = await call(READ_FILE_SCRIPT, [path]);
      if (result.status === 3) return null;
      if (result.status !== 0) throw failed('read', path, result);
      return text(result);
    },
    // The worker's HOME never changes during a run: asked once.
    homeDirectory: () => {
      home ??= call(HOME_SCRIPT, []).then((result) => {
        const value = text(result);
        if (result.status !== 0 || !value.startsWith('/')) {
          throw failed('echo $HOME', '', result);
        }
        return value;
      });
      home.catch(() => {
        home = undefined;
      });
      return home;
    },
  };
}
