// A real PostgreSQL server for the archive's tests (and the archive bench): initdb into a
// fresh temp dir, the postmaster in the foreground on a free loopback port, one database.
// Never the distribution's own cluster. The server binaries come from Debian's postgresql
// package (hack/ensure-postgres.sh installs it). One server per test file.
//
// As root (CI, this machine) the server runs as the `postgres` system user, since
// PostgreSQL refuses to run as root; as any other user it runs as that user.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  openSync,
  closeSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
  chownSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface TestPostgres {
  /** postgres://postgres@127.0.0.1:PORT/lorenz (trust auth: no password). */
  url: string;
  host: string;
  port: number;
  database: string;
  dataDir: string;
  /** Fast shutdown and the temp dir removed. */
  stop(): Promise<void>;
  /** SIGKILL of the postmaster and every backend at once, as a crashed server: for fault tests. */
  kill(): Promise<void>;
  /** SIGSTOP of the postmaster and its backends: a server that accepts TCP but never answers. */
  freeze(): Promise<void>;
  /** SIGCONT after freeze(). */
  thaw(): Promise<void>;
  /** Starts the server again on the same data dir and port (after kill or stop-less crash). */
  restart(): Promise<void>;
}

/**
 * Roles in this group log in over TCP with a password (scram-sha-256); every other role is
 * trusted on loopback. A test that needs password auth creates its role IN ROLE this group.
 */
export const PASSWORD_GROUP = 'password_login';

const DATABASE = 'lorenz';

/** The bin directory of the newest installed PostgreSQL (LORENZ_PG_BIN overrides it). */
export function postgresBinDir(): string {
  const fromEnv = process.env.LORENZ_PG_BIN;
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'postgres')))
        .sort((a, b) => Number(a) - Number(b))
    : [];
  const newest = versions[versions.length - 1];
  if (newest === undefined) {
    throw new Error(
      'no PostgreSQL server under /usr/lib/postgresql/*/bin: run hack/ensure-postgres.sh (Debian: apt-get install postgresql), or set LORENZ_PG_BIN',
    );
  }
  return join(root, newest, 'bin');
}

/** The command prefix that runs a server binary as a user PostgreSQL accepts. */
function asServerUser(): { prefix: string[]; uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return { prefix: [] };
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  // setpriv execs the server in place (no intermediate process), so the child is the postmaster.
  return {
    prefix: ['setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--'],
    uid,
    gid,
  };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export interface StartOptions {
  /**
   * fsync on (default off): what a real server does at each commit, for benchmarks that time
   * durable writes. Tests need not pay for it: a killed server loses nothing without it.
   */
  fsync?: boolean;
}

export async function startPostgres(options: StartOptions = {}): Promise<TestPostgres> {
  const bin = postgresBinDir();
  const user = asServerUser();
  const root = mkdtempSync(join(tmpdir(), 'lorenz-pg-'));
  if (user.uid !== undefined && user.gid !== undefined) chownSync(root, user.uid, user.gid);
  const dataDir = join(root, 'data');
  const logFile = join(root, 'server.log');
  // [command, ...args] of a server binary, run as the server's user.
  const argv = (program: string, args: string[]): [string, string[]] => {
    const [first = program, ...rest] = [...user.prefix, program, ...args];
    return [first, rest];
  };
  try {
    execFileSync(
      ...argv(join(bin, 'initdb'), [
        '-D',
        dataDir,
        '-U',
        'postgres',
        '-A',
        'trust',
        '-E',
        'UTF8',
        '--no-locale',
        '--no-sync',
      ]),
      {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`initdb failed: ${stderr || String(error)}`, { cause: error });
  }
  // Loopback only; the socket in the temp dir (not /var/run/postgresql, the system cluster's).
  writeFileSync(
    join(dataDir, 'pg_hba.conf'),
    [
      'local all all trust',
      `host all +${PASSWORD_GROUP} 127.0.0.1/32 scram-sha-256`,
      'host all all 127.0.0.1/32 trust',
      '',
    ].join('\n'),
  );
  const port = await freePort();
  let child: ChildProcess | undefined;

  const spawnServer = async (): Promise<void> => {
    const log = openSync(logFile, 'a');
    const program = join(bin, 'postgres');
    const args = [
      '-D',
      dataDir,
      '-p',
      String(port),
      '-k',
      root,
      '-c',
      'listen_addresses=127.0.0.1',
      // fsync off: a killed server loses nothing (the kernel still has what it wrote), only a
      // crashed machine would. synchronous_commit stays on: with it off, a SIGKILL loses
      // commits that were already acknowledged, which is what the fault tests look for.
      '-c',
      `fsync=${options.fsync === true ? 'on' : 'off'}`,
      '-c',
      'max_connections=50',
    ];
    const started = spawn(...argv(program, args), {
      // Its own process group: a Ctrl-C of the tests does not reach it before stop() does.
      detached: true,
      stdio: ['ignore', log, log],
    });
    closeSync(log);
    child = started;
    await waitReady(port, started, logFile);
  };

  await spawnServer();
  const admin = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${DATABASE}`);
    await admin.query(`CREATE ROLE ${PASSWORD_GROUP} NOLOGIN`);
  } finally {
    await admin.end();
  }

  // Every process of the server: PostgreSQL puts each backend in a session of its own
  // (setsid), so the postmaster's process group is not enough; all of them work in the data dir.
  const signalAll = (signal: NodeJS.Signals): void => {
    const pids = new Set(serverPids(dataDir));
    if (child?.pid !== undefined && child.exitCode === null) pids.add(child.pid);
    for (const pid of pids) {
      try {
        process.kill(pid, signal);
      } catch {
        // Gone meanwhile.
      }
    }
  };

  // A test process that dies leaves no server behind.
  const onExit = (): void => {
    signalAll('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  };
  process.on('exit', onExit);

  const end = async (signal: 'SIGKILL' | 'SIGINT'): Promise<void> => {
    const current = child;
    if (current?.pid === undefined) return;
    if (signal === 'SIGKILL') {
      signalAll('SIGKILL');
    } else {
      // A frozen server handles SIGINT (fast shutdown) only once it runs again.
      signalAll('SIGCONT');
      try {
        process.kill(current.pid, 'SIGINT');
      } catch {
        // Already gone.
      }
    }
    await exited(current);
    await waitGone(dataDir);
  };

  return {
    url: `postgres://postgres@127.0.0.1:${port}/${DATABASE}`,
    host: '127.0.0.1',
    port,
    database: DATABASE,
    dataDir,
    kill: () => end('SIGKILL'),
    freeze: async () => signalAll('SIGSTOP'),
    thaw: async () => signalAll('SIGCONT'),
    restart: async () => {
      if (child !== undefined && child.exitCode === null && child.signalCode === null) {
        throw new Error('restart: the server is still running (kill it first)');
      }
      await spawnServer();
    },
    stop: async () => {
      // SIGINT: fast shutdown (backends are told to end, no wait for clients).
      await end('SIGINT');
      process.off('exit', onExit);
      rmSync(root, { recursive: true, force: true });
    },
  };
}

async function waitReady(port: number, child: ChildProcess, logFile: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`postgres exited (${child.exitCode ?? child.signalCode}): ${tail(logFile)}`);
    }
    const client = new pg.Client({
      host: '127.0.0.1',
      port,
      user: 'postgres',
      database: 'postgres',
      connectionTimeoutMillis: 2_000,
    });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('SELECT 1');
      await client.end();
      return;
    } catch {
      await client.end().catch(() => {});
    }
    if (Date.now() > deadline)
      throw new Error(`postgres did not accept connections within 60 s: ${tail(logFile)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The processes working in the data dir: the postmaster and its children. */
function serverPids(dataDir: string): number[] {
  return readdirSync('/proc').flatMap((pid) => {
    if (!/^\d+$/.test(pid)) return [];
    try {
      return readlinkSync(`/proc/${pid}/cwd`) === dataDir ? [Number(pid)] : [];
    } catch {
      return [];
    }
  });
}

/** Until no process of the server is left (the backends of a killed server). */
async function waitGone(dataDir: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && serverPids(dataDir).length > 0) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-20).join('\n');
  } catch {
    return '(no server log)';
  }
}
