// One git server for a whole test file, with the credentials folder its user's git reads.
import { afterAll, beforeAll } from 'vitest';
import { useTempDir } from '../workspace.js';
import { credentialsFolder, startGitServer, type GitServer } from './git-server.js';

export interface GitServerFixture {
  server: GitServer;
  /** A temp dir of the file's own, removed after its tests. */
  base: string;
  /** In `base`: the git-credentials folder of `user`, as the Secret mounts it. */
  credentials: string;
}

/**
 * Starts a git server before the file's tests (on `addresses`, the server's default when not
 * given) whose one user is `user` with `token`, and makes a temp dir holding that user's
 * credentials folder; the server closes and the dir goes after the last test. The fixture
 * returned is filled in by then: read its fields in a test or a hook.
 */
export function gitServerPerFile(
  prefix: string,
  user: string,
  token: string,
  addresses?: string[],
): Readonly<GitServerFixture> {
  let started: GitServerFixture | undefined;
  let server: GitServer | undefined;
  beforeAll(async () => {
    server = await startGitServer({
      users: { [user]: token },
      ...(addresses ? { addresses } : {}),
    });
  });
  afterAll(() => server?.close());
  useTempDir(prefix, 'file', async (base) => {
    if (server === undefined) throw new Error('the git server did not start');
    const credentials = await credentialsFolder(base, user, token);
    started = { server, base, credentials };
  });
  const fixture = (): GitServerFixture => {
    if (started === undefined) throw new Error(`the ${prefix}* git server is read outside a test`);
    return started;
  };
  return {
    get server() {
      return fixture().server;
    },
    get base() {
      return fixture().base;
    },
    get credentials() {
      return fixture().credentials;
    },
  };
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
