import { Client, type ClientChannel, type ServerHostKeyAlgorithm } from 'ssh2';
import { LorenzError } from '../../workflow/errors.js';
import { describeSshHost, knownHostsName, type SshHost } from '../../workflow/ssh-host.js';
import {
  knownKeyTypes,
  parseKnownHosts,
  verifyHostKey,
  type HostKeyVerdict,
} from './known-hosts.js';

/**
 * One SSH connection per run, shared by every command, file operation and transfer as
 * multiplexed channels: a hook then costs a channel open, not a TCP and key exchange. The
 * connection is opened on first use and again after it drops; whoever needs to know that it
 * came back (to end process groups a drop left running) is told before any other use.
 */
export interface SshTarget {
  host: SshHost & { user: string };
  /** A private key (OpenSSH or PEM), without a passphrase. Read by Lorenz, never shipped. */
  privateKey: Buffer;
  /** known_hosts text: the only host keys accepted. */
  knownHosts: string;
  /** Bound on connecting (worker.ssh_timeout_ms). */
  timeoutMs: number;
}

/** How a remote command ended, as sshd reported it (a signal by name, without SIG). */
export interface ChannelExit {
  code: number | null;
  signal: string | null;
}

export interface OpenChannel {
  channel: ClientChannel;
  /** Resolves with a reason when the connection carrying the channel ends. */
  lost: Promise<string>;
  /**
   * Resolves when sshd reports the exit. Listened for as the channel opens: a quick command's
   * exit can arrive in the same read as the channel's confirmation, before any caller could
   * attach a listener of its own, and the event would be missed.
   */
  exit: Promise<ChannelExit>;
}

export interface SshConnectionOptions {
  /**
   * Called on every (re)connection before anything else uses it, with a way to open channels
   * that does not wait for itself.
   */
  onConnected?: (exec: (command: string) => Promise<OpenChannel>) => Promise<void>;
  /**
   * Channels open at once: OpenSSH's MaxSessions is 10 by default, and one more is refused,
   * so the rest wait their turn. Long-lived channels (agents' bridges) never wait, since
   * they would hold their place for good; they shrink what short ones share, down to one.
   */
  maxChannels?: number;
}

export interface SshConnection {
  /** `user@host[:port]`, for messages. */
  readonly name: string;
  /** An exec channel for `command` (parsed by the user's login shell), connecting if needed. */
  exec: (command: string, options?: { longLived?: boolean }) => Promise<OpenChannel>;
  /** Connects now (or reuses the connection); fails with ssh_connect. */
  connect(): Promise<void>;
  close(): void;
}

const KEEPALIVE_INTERVAL_MS = 5000;
const KEEPALIVE_COUNT_MAX = 3;
const DEFAULT_MAX_CHANNELS = 8;

export function connectFailure(name: string, reason: string): LorenzError {
  return new LorenzError('ssh_connect', `ssh_connect: ${name}: ${reason}`, { host: name });
}

function hostKeyReason(verdict: HostKeyVerdict, name: string): string {
  if (verdict.ok) return '';
  if (verdict.reason === 'unknown') {
    return `host key not verified: ${name} has no entry in known_hosts (never accepted on first use)`;
  }
  if (verdict.reason === 'revoked') return `host key of ${name} is marked @revoked in known_hosts`;
  return `host key of ${name} does not match known_hosts: it changed, or something is in the middle`;
}

function describeError(
  error: Error & { level?: string; code?: string },
  timeoutMs: number,
): string {
  if (error.level === 'client-authentication') return 'the key was refused (authentication failed)';
  if (
    error.level === 'client-timeout' ||
    /Timed out while waiting for handshake/.test(error.message)
  ) {
    return `no SSH handshake within ${timeoutMs}ms`;
  }
  if (error.code === 'ECONNREFUSED') return 'connection refused (no sshd listening)';
  return error.message;
}

// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function createSshConnection(
  target: SshTarget,
  options: SshConnectionOptions = {},
): SshConnection {
  const name = describeSshHost(target.host);
  const knownHosts = parseKnownHosts(target.knownHosts);
  const hostName = knownHostsName(target.host);
  let current: Promise<{ client: Client; lost: Promise<string> }> | undefined;
  // The client `current` stands for: a late close of an older one must not forget a newer one.
  let currentClient: Client | undefined;
  let shortOpen = 0;
  let longOpen = 0;
  const waiting: (() => void)[] = [];
  const maxChannels = options.maxChannels ?? DEFAULT_MAX_CHANNELS;
  const budget = () => Math.max(1, maxChannels - longOpen);
  const pump = (): void => {
    while (shortOpen < budget()) {
      const next = waiting.shift();
      if (!next) return;
      shortOpen += 1;
      next();
    }
  };
  const acquire = async (longLived: boolean): Promise<void> => {
    if (longLived) longOpen += 1;
    else if (shortOpen < budget()) shortOpen += 1;
    else await new Promise<void>((resolve) => waiting.push(resolve));
  };
  const releaser = (longLived: boolean) => (): void => {
    if (longLived) longOpen -= 1;
    else shortOpen -= 1;
    pump();
  };

  const rawExec = async (
    client: Client,
    lost: Promise<string>,
    command: string,
    longLived = false,
  ): Promise<OpenChannel> => {
    await acquire(longLived);
    const release = releaser(longLived);
    return new Promise<OpenChannel>((resolve, reject) => {
      try {
        client.exec(command, (error, channel) => {
          if (error) {
            release();
            reject(connectFailure(name, `cannot open a channel: ${error.message}`));
            return;
          }
          channel.once('close', release);
          // A write after the remote end closed (a guard that refused a transfer) is an
          // 'error' on the channel; what happened is read from its exit and close instead.
          channel.on('error', () => {});
          const exit = new Promise<ChannelExit>((resolveExit) => {
            channel.once('exit', (code: number | null, signal?: string) =>
              resolveExit({ code: code ?? null, signal: signal ?? null }),
            );
          });
          resolve({ channel, lost, exit });
        });
      } catch (error) {
        // ssh2 throws synchronously when the connection is already gone.
        release();
        reject(connectFailure(name, `connection lost: ${(error as Error).message}`));
      }
    });
  };

  const connectOnce = () =>
    new Promise<{ client: Client; lost: Promise<string> }>((resolve, reject) => {
      const client = new Client();
      currentClient = client;
      let verdict: HostKeyVerdict = { ok: true };
      let ready = false;
      let markLost: (reason: string) => void = () => {};
      const lost = new Promise<string>((resolveLost) => {
        markLost = resolveLost;
      });
      client.on('ready', () => {
        ready = true;
        resolve({ client, lost });
      });
      client.on('error', (error: Error & { level?: string; code?: string }) => {
        const reason = !verdict.ok
          ? hostKeyReason(verdict, hostName)
          : describeError(error, target.timeoutMs);
        if (ready) markLost(`connection to ${name} lost: ${reason}`);
        else reject(connectFailure(name, reason));
      });
      client.on('close', () => {
        markLost(`connection to ${name} lost`);
        reject(connectFailure(name, 'connection closed during the handshake'));
        if (currentClient === client) {
          current = undefined;
          currentClient = undefined;
        }
      });
      const types = knownKeyTypes(knownHosts, hostName).filter(isSupportedKeyType);
      client.connect({
        host: target.host.host,
        port: target.host.port,
        username: target.host.user,
        privateKey: target.privateKey,
        readyTimeout: target.timeoutMs,
        keepaliveInterval: KEEPALIVE_INTERVAL_MS,
        keepaliveCountMax: KEEPALIVE_COUNT_MAX,
        // Ask for a key type known_hosts has, as OpenSSH does, so a host with several keys
        // is not refused for showing one we do not list. ssh-rsa also covers rsa-sha2-*.
        ...(types.length > 0 ? { algorithms: { serverHostKey: withRsaVariants(types) } } : {}),
        hostVerifier: (key: Buffer) => {
          verdict = verifyHostKey(knownHosts, hostName, key);
          return verdict.ok;
        },
      });
      // Every channel open and exec request is a small write awaiting its answer: with
      // Nagle's algorithm each one waits out the peer's delayed ACK (~40 ms a round trip,
      // 85 ms a hook instead of 8 on loopback).
      client.setNoDelay(true);
    });

  const connection = async (): Promise<{ client: Client; lost: Promise<string> }> => {
    if (!current) {
      const attempt = connectOnce().then(async (connected) => {
        await options.onConnected?.((command) =>
          rawExec(connected.client, connected.lost, command),
        );
        return connected;
      });
      current = attempt;
      attempt.catch(() => {
        if (current === attempt) current = undefined;
      });
    }
    return current;
  };

  return {
    name,
    exec: async (command, execOptions) => {
      const { client, lost } = await connection();
      return rawExec(client, lost, command, execOptions?.longLived ?? false);
    },
    connect: async () => {
      await connection();
    },
    close: () => {
      const closing = current;
      current = undefined;
      currentClient = undefined;
      void closing?.then(({ client }) => client.end()).catch(() => undefined);
    },
  };
}

const SUPPORTED_KEY_TYPES: readonly ServerHostKeyAlgorithm[] = [
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'rsa-sha2-512',
  'rsa-sha2-256',
  'ssh-rsa',
];

const isSupportedKeyType = (type: string): type is ServerHostKeyAlgorithm =>
  (SUPPORTED_KEY_TYPES as readonly string[]).includes(type);

function withRsaVariants(types: ServerHostKeyAlgorithm[]): ServerHostKeyAlgorithm[] {
  if (!types.includes('ssh-rsa')) return types;
  return [...new Set<ServerHostKeyAlgorithm>(['rsa-sha2-512', 'rsa-sha2-256', ...types])];
}
