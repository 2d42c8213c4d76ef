import { chmod, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LorenzError, errorMessage } from '../../workflow/errors.js';

/**
 * Git credentials as the credential helper reads them: a directory with one file per host,
 * named by the host (`github.com`), holding `token` or `username:token`. It is the layout of
 * a Kubernetes Secret with a key per host mounted as a volume, so the runner uses the mount
 * as it is. `lorenz run --git-credentials` takes such a directory too, or a file in git's
 * own credential-store format (`https://user:token@host`, one per line), which is copied
 * into a private directory for the run and removed after it.
 */
export interface GitCredentials {
  directory: string;
  /** Lower-case host names that have a credential. */
  hosts: string[];
  /** Removes what was made for this run (nothing for a directory given as it is). */
  dispose: () => Promise<void>;
}

const HOST_NAME = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/;

/** A credential file's name: its host, in lower case (`github.com`). */
export const isCredentialHostName = (name: string): boolean => HOST_NAME.test(name);

const invalid = (path: string, rule: string): LorenzError =>
  new LorenzError('invalid_git_credentials', `invalid_git_credentials: ${path}: ${rule}`, {
    path,
  });

async function fromDirectory(directory: string): Promise<GitCredentials> {
  // A Secret mount also holds `..data` and timestamped directories: only host names count.
  const names = (await readdir(directory)).filter((name) => !name.startsWith('.'));
  const hosts: string[] = [];
  for (const name of names) {
    if (!isCredentialHostName(name)) {
      throw invalid(
        join(directory, name),
        'a credential file is named by its host, in lower case (github.com)',
      );
    }
    const text = (await readFile(join(directory, name), 'utf8')).trim();
    if (text === '' || text.includes('\n')) {
      throw invalid(join(directory, name), 'must hold one line: a token, or username:token');
    }
    hosts.push(name);
  }
  return { directory, hosts: hosts.sort(), dispose: async () => {} };
}

/**
 * One line of git's credential store, `https://user:token@host`: its host and the secret as
 * a host file holds it (`user:token`). `where` names the line in the error.
 */
export function parseStoreLine(line: string, where: string): { host: string; secret: string } {
  let url: URL;
  try {
    url = new URL(line);
  } catch {
    throw invalid(where, 'not a credential-store line (https://user:token@host)');
  }
  if (url.protocol !== 'https:') throw invalid(where, 'only https credentials are used');
  if (url.password === '') throw invalid(where, 'has no token (https://user:token@host)');
  const username = decodeURIComponent(url.username);
  return {
    host: url.hostname.toLowerCase(),
    secret: `${username}:${decodeURIComponent(url.password)}`,
  };
}

async function fromStoreFile(path: string): Promise<GitCredentials> {
  const lines = (await readFile(path, 'utf8')).split('\n');
  const entries = new Map<string, string>();
  lines.forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const { host, secret } = parseStoreLine(line, `${path}:${index + 1}`);
    // git's store answers with the first match; so does this.
    if (!entries.has(host)) entries.set(host, secret);
  });
  const directory = await mkdtemp(join(tmpdir(), 'lorenz-git-credentials-'));
  await chmod(directory, 0o700);
  for (const [host, secret] of entries) {
    await writeFile(join(directory, host), `${secret}\n`, { mode: 0o600 });
  }
  return {
    directory,
    hosts: [...entries.keys()].sort(),
    dispose: () => rm(directory, { recursive: true, force: true }),
  };
}

/** Reads `--git-credentials`: a directory of host files, or a credential-store file. */
export async function loadGitCredentials(path: string): Promise<GitCredentials> {
  try {
    return (await stat(path)).isDirectory() ? await fromDirectory(path) : await fromStoreFile(path);
  } catch (error) {
    if (error instanceof LorenzError) throw error;
    throw invalid(path, `cannot be read: ${errorMessage(error)}`);
  }
}

/** The token of a host file's secret: `token`, or the part after `username:`. */
export function secretToken(secret: string): string {
  const text = secret.trim();
  const colon = text.indexOf(':');
  return colon >= 0 ? text.slice(colon + 1) : text;
}

/** Every token in the credentials, for the redactor: none of them may appear in a report. */
export async function credentialSecrets(credentials: GitCredentials): Promise<string[]> {
  const secrets: string[] = [];
  for (const host of credentials.hosts) {
    secrets.push(secretToken(await readFile(join(credentials.directory, host), 'utf8')));
  }
  return secrets.filter((secret) => secret.length >= 4);
}
