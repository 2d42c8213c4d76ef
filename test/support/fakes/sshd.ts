// A real OpenSSH server on loopback, for the SSH worker tests: /usr/sbin/sshd in the
// foreground with a generated config, its own host key, and a dedicated user
// (`lorenz-worker`, its own home) as the "remote host". Installed by hack/ensure-sshd.sh.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const WORKER_USER = 'lorenz-worker';
export const SSHD = '/usr/sbin/sshd';

export interface Sshd {
  host: string;
  port: number;
  user: string;
  /** The user's home on the "worker". */
  home: string;
  /** Private key accepted for `user` (ed25519, no passphrase). */
  keyFile: string;
  /** Another key, not authorized. */
  wrongKeyFile: string;
  /** `[127.0.0.1]:PORT ssh-ed25519 …`: the server's true host key. */
  knownHosts: string;
  /** The same name with a different key: what a changed host key looks like. */
  wrongKnownHosts: string;
  /** `user@127.0.0.1:PORT` as worker.ssh_hosts writes it. */
  destination: string;
  /** Kills the sshd processes serving current sessions (the connection drops). */
  cutSessions(): Promise<number>;
  /** Command lines of the user's processes containing `marker`. */
  processes(marker: string): Promise<string[]>;
  /** Runs a shell command as the worker user (bash -c), for planting trees. */
  asWorker(script: string): Promise<string>;
  stop(): Promise<void>;
}

/** Once per machine: the user exists, may log in with a key, and has a home of its own. */
export async function ensureWorkerUser(): Promise<string> {
  try {
    await run('id', ['-u', WORKER_USER]);
  } catch {
    await run('useradd', ['-m', '-s', '/bin/bash', WORKER_USER]).catch(async (error: unknown) => {
      // Another test file created it meanwhile.
      await run('id', ['-u', WORKER_USER]).catch(() => {
        throw error;
      });
    });
  }
  // A new account's password is `!` (locked), which sshd without PAM refuses even for keys.
  await run('usermod', ['-p', '*', WORKER_USER]);
  const { stdout } = await run('getent', ['passwd', WORKER_USER]);
  return stdout.trim().split(':')[5] ?? `/home/${WORKER_USER}`;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

async function listening(host: string, port: number, withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, host);
      socket.once('data', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`sshd did not listen on ${host}:${port}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function keygen(file: string): Promise<string> {
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'lorenz-test', '-f', file]);
  const publicKey = await readFile(`${file}.pub`, 'utf8');
  return publicKey.trim().split(/\s+/).slice(0, 2).join(' ');
}

/** pid → [ppid, uid, comm] for every process. */
async function processTable(): Promise<Map<number, { ppid: number; uid: number; comm: string }>> {
  const table = new Map<number, { ppid: number; uid: number; comm: string }>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = await readFile(`/proc/${entry}/status`, 'utf8');
      const field = (name: string) =>
        new RegExp(`^${name}:\\s*(\\S+)`, 'm').exec(status)?.[1] ?? '';
      table.set(Number(entry), {
        ppid: Number(field('PPid')),
        uid: Number(field('Uid')),
        comm: field('Name'),
      });
    } catch {
      // exited while we looked
    }
  }
  return table;
}

export async function startSshd(): Promise<Sshd> {
  const home = await ensureWorkerUser();
  const uid = Number((await run('id', ['-u', WORKER_USER])).stdout.trim());
  await mkdir('/run/sshd', { recursive: true });
  const directory = await mkdtemp(join(tmpdir(), 'lorenz-sshd-'));
  // sshd reads authorized_keys as the user: the directory must be reachable by it.
  await chmod(directory, 0o755);
  const hostKey = join(directory, 'host_ed25519');
  const keyFile = join(directory, 'id_ed25519');
  const wrongKeyFile = join(directory, 'wrong_ed25519');
  const [hostPublic, userPublic] = await Promise.all([
    keygen(hostKey),
    keygen(keyFile),
    keygen(wrongKeyFile),
  ]);
  const otherHost = await keygen(join(directory, 'other_host'));
  const authorized = join(directory, 'authorized_keys');
  await writeFile(authorized, `${userPublic}\n`, { mode: 0o644 });
  await chmod(authorized, 0o644);
  const port = await freePort();
  const host = '127.0.0.1';
  const config = join(directory, 'sshd_config');
  await writeFile(
    config,
    [
      `Port ${port}`,
      `ListenAddress ${host}`,
      `HostKey ${hostKey}`,
      `PidFile ${join(directory, 'sshd.pid')}`,
      `AuthorizedKeysFile ${authorized}`,
      'UsePAM no',
      'StrictModes no',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PubkeyAuthentication yes',
      `AllowUsers ${WORKER_USER}`,
      'MaxStartups 100',
      'LogLevel ERROR',
      'Subsystem sftp internal-sftp',
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(SSHD, ['-D', '-e', '-f', config], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    log += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await Promise.race([
      listening(host, port, 10_000),
      exited.then(() => {
        throw new Error(`sshd exited: ${log}`);
      }),
    ]);
  } catch (error) {
    child.kill('SIGKILL');
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
  const name = `[${host}]:${port}`;
  const descendants = async (): Promise<number[]> => {
    const table = await processTable();
    const found: number[] = [];
    const under = (pid: number): boolean => {
      for (let current = pid, depth = 0; current > 1 && depth < 10; depth += 1) {
        if (current === child.pid) return true;
        current = table.get(current)?.ppid ?? 0;
      }
      return false;
    };
    for (const [pid, info] of table) {
      if (info.uid === uid && info.comm.startsWith('sshd') && under(pid)) found.push(pid);
    }
    return found;
  };
  return {
    host,
    port,
    user: WORKER_USER,
    home,
    keyFile,
    wrongKeyFile,
    knownHosts: `${name} ${hostPublic}\n`,
    wrongKnownHosts: `${name} ${otherHost}\n`,
    destination: `${WORKER_USER}@${host}:${port}`,
    cutSessions: async () => {
      const pids = await descendants();
      for (const pid of pids) process.kill(pid, 'SIGKILL');
      return pids.length;
    },
    processes: async (marker) => {
      const { stdout } = await run('ps', ['-u', WORKER_USER, '-o', 'args=']).catch(() => ({
        stdout: '',
      }));
      return stdout.split('\n').filter((line) => line.includes(marker) && !line.includes('ps -u'));
    },
    asWorker: async (script) =>
      (await run('runuser', ['-u', WORKER_USER, '--', 'bash', '-c', script])).stdout,
    stop: async () => {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 2000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
      await rm(directory, { recursive: true, force: true });
    },
  };
}
