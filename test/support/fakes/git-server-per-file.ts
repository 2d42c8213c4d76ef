// One git server for a whole test file, with the credentials folder its user's git reads.
import { afterAll, beforeAll } from 'vitest';
import { useTempDir } from '../workspace.js';
import {
  credentialsFolder,
  startGitServer,
  type GitServer,
  type GitServerOptions,
} from './git-server.js';

export interface GitServerFixture {
  server: GitServer;
  /** A temp dir of the file's own, removed after its tests. */
  base: string;
  /** In `base`: the git-credentials folder of `user`, as the Secret mounts it. */
  credentials: string;
}

/**
 * Starts a git server (`options`) before the file's tests, makes a temp dir holding the
 * credentials folder of `user` (with the token `options.users` gives it) and hands them to
 * `use`; the server closes and the dir goes after the last test.
 */
export function gitServerPerFile(
  prefix: string,
  options: GitServerOptions & { users: Record<string, string> },
  user: string,
  use: (fixture: GitServerFixture) => void,
): void {
  let server: GitServer | undefined;
  beforeAll(async () => {
    server = await startGitServer(options);
  });
  afterAll(() => server?.close());
  useTempDir(prefix, 'file', async (base) => {
    if (server === undefined) throw new Error('the git server did not start');
    const credentials = await credentialsFolder(base, user, options.users[user] ?? '');
    use({ server, base, credentials });
  });
}

/**
 * The environment git runs in against `server`: the caller's PATH, `home` as HOME, the
 * server's CA trusted, no system config, the C locale.
 */
export function gitEnvironment(server: GitServer, home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    GIT_SSL_CAINFO: server.caFile,
    GIT_CONFIG_NOSYSTEM: '1',
    LANG: 'C',
  };
}
