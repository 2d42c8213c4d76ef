// Real git over HTTPS on loopback, for tests of git workspaces (clone per issue with
// host-scoped credentials, branch per issue, merge-up, refused pushes, protected branches).
// Requests are answered by git's own CGI, git-http-backend, so clients see exactly what a
// smart-HTTP forge would send: capability negotiation, shallow packs, hook messages on push.
// What this file adds is the forge's part: TLS with a throwaway CA, Basic auth (pushes always,
// reads for private repos), several loopback addresses standing for several hosts, and a log
// of every request with the credentials it carried.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile as readText, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

export interface GitServerOptions {
  /** Addresses to listen on; each stands for a separate host. Linux routes all of 127/8 to lo. */
  addresses?: string[];
  /** username → password (token) accepted by Basic auth. */
  users?: Record<string, string>;
}

export interface GitRequest {
  /** The local address the client connected to: which "host" it used. */
  address: string;
  method: string;
  /** Path and query string, as requested (`/acme/app.git/info/refs?service=git-upload-pack`). */
  path: string;
  /** Decoded from a Basic Authorization header; null without one. */
  user: string | null;
  password: string | null;
  status: number;
}

export interface RepoOptions {
  /** path → content of the initial commit; a README when absent. */
  files?: Record<string, string>;
  defaultBranch?: string;
  /** Reading (clone, fetch) requires valid credentials too, not only pushing. */
  private?: boolean;
  /** Commits on the default branch (the ones after the first are empty); default 1. */
  commits?: number;
}

export interface GitServer {
  /** https base URL of one address (default the first), e.g. https://127.0.0.1:PORT */
  url(address?: string): string;
  /** `${url(address)}/<owner>/<name>.git` */
  repoUrl(repo: string, address?: string): string;
  /** The same port on every address. */
  port: number;
  /** PEM of the self-signed certificate, for GIT_SSL_CAINFO / http.sslCAInfo. */
  caFile: string;
  /** Directory holding the bare repositories (`<root>/<owner>/<name>.git`). */
  root: string;
  requests: GitRequest[];
  /** Creates the bare repo `owner/name`; returns its path. */
  createRepo(repo: string, options?: RepoOptions): Promise<string>;
  /** Commits files onto a branch (made from `from` or the default branch when missing); returns the sha. */
  commit(
    repo: string,
    branch: string,
    files: Record<string, string>,
    options?: { message?: string; from?: string },
  ): Promise<string>;
  branchSha(repo: string, branch: string): Promise<string | null>;
  /**
   * A branch's tip and how many commits it has that `base` (default: the default branch) has
   * not, by git itself; null when the branch does not exist. Backs the GitHub stand-in's
   * comparisons, so they say what was really pushed.
   */
  branchHead(
    repo: string,
    branch: string,
    base?: string,
  ): Promise<{ sha: string; aheadBy: number } | null>;
  readFile(repo: string, ref: string, path: string): Promise<string | null>;
  /** A pre-receive hook refusing every push to these branches; [] removes it. */
  refusePushesTo(repo: string, branches: string[]): Promise<void>;
  close(): Promise<void>;
}

const run = promisify(execFile);
const IDENTITY = ['-c', 'user.name=test', '-c', 'user.email=test@example.com'];

/** Git run by the fixture sees none of the machine's config: no system file, a bare HOME. */
function gitEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
  };
}

async function git(home: string, args: string[], cwd?: string): Promise<string> {
  const { stdout } = await run('git', args, { cwd, env: gitEnv(home), maxBuffer: 64 << 20 });
  return stdout;
}

/** A self-signed certificate naming every address as an IP SAN, so curl verifies it as is. */
async function makeCertificate(
  dir: string,
  addresses: string[],
): Promise<{ key: string; cert: string }> {
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  const names = [...addresses.map((address) => `IP:${address}`), 'DNS:localhost'].join(',');
  // prettier-ignore
  await run('/usr/bin/openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2',
    '-subj', '/CN=lorenz-test', '-addext', `subjectAltName=${names}`,
    '-keyout', key, '-out', cert,
  ]);
  return { key, cert };
}

function listen(server: Server, port: number, address: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, address, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

/** One server per address on one port: the first picks a free port, the rest must get it too. */
async function listenAll(make: () => Server, addresses: string[]): Promise<[Server[], number]> {
  for (let attempt = 0; ; attempt++) {
    const servers: Server[] = [];
    try {
      let port = 0;
      for (const address of addresses) {
        const server = make();
        servers.push(server);
        port = await listen(server, port, address);
      }
      return [servers, port];
    } catch (error) {
      await Promise.all(servers.map(closeServer));
      const inUse = (error as NodeJS.ErrnoException).code === 'EADDRINUSE';
      if (!inUse || attempt >= 10) throw error;
    }
  }
}

function basicAuth(header: string | undefined): { user: string | null; password: string | null } {
  const match = /^Basic\s+(\S+)$/i.exec(header ?? '');
  if (match === null) return { user: null, password: null };
  const decoded = Buffer.from(match[1] ?? '', 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return { user: decoded, password: null };
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** `owner/name` from `/owner/name.git/...`; null for paths naming no repository. */
function repoOf(pathname: string): string | null {
  const match = /^\/([^/]+)\/([^/]+?)(?:\.git)?\/(?:info|objects|HEAD|git-)/.exec(pathname);
  return match === null ? null : `${match[1]}/${match[2]}`;
}

/** The CGI environment of RFC 3875, request headers included as HTTP_*: http-backend reads
 * HTTP_GIT_PROTOCOL (protocol v2) and HTTP_CONTENT_ENCODING (gzipped bodies) from there. */
function cgiEnv(
  request: IncomingMessage,
  url: URL,
  address: string,
  user: string | null,
  base: NodeJS.ProcessEnv,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...base,
    GATEWAY_INTERFACE: 'CGI/1.1',
    REQUEST_METHOD: request.method ?? 'GET',
    PATH_INFO: decodeURIComponent(url.pathname),
    QUERY_STRING: url.search.slice(1),
    REMOTE_ADDR: request.socket.remoteAddress ?? '',
    SERVER_NAME: address,
  };
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string') env[`HTTP_${name.toUpperCase().replaceAll('-', '_')}`] = value;
  }
  // Node leaves undefined variables out of a child's environment.
  env.CONTENT_TYPE = env.HTTP_CONTENT_TYPE;
  env.CONTENT_LENGTH = env.HTTP_CONTENT_LENGTH;
  env.GIT_PROTOCOL = env.HTTP_GIT_PROTOCOL;
  // http-backend enables receive-pack only for an authenticated user; auth is checked above.
  if (user !== null) env.REMOTE_USER = user;
  return env;
}

/** Splits the CGI header block off the front of the backend's output. */
function parseCgiHeaders(
  buffer: Buffer,
): { status: number; headers: Record<string, string>; rest: Buffer } | null {
  const text = buffer.toString('latin1');
  const crlf = text.indexOf('\r\n\r\n');
  const lf = text.indexOf('\n\n');
  const end = crlf >= 0 && (lf < 0 || crlf < lf) ? crlf + 4 : lf >= 0 ? lf + 2 : -1;
  if (end < 0) return null;
  let status = 200;
  const headers: Record<string, string> = {};
  for (const line of text.slice(0, end).split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
    else headers[name] = value;
  }
  return { status, headers, rest: buffer.subarray(end) };
}

/** Runs git-http-backend for one request: body in, CGI headers parsed, pack streamed out. */
function serveCgi(
  backend: string,
  env: NodeJS.ProcessEnv,
  request: IncomingMessage,
  response: ServerResponse,
  children: Set<ChildProcess>,
  answered: (status: number) => void,
): void {
  const child = spawn(backend, [], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  let head = Buffer.alloc(0);
  let stderr = '';
  const onData = (chunk: Buffer): void => {
    head = Buffer.concat([head, chunk]);
    const parsed = parseCgiHeaders(head);
    if (parsed === null) return;
    child.stdout.off('data', onData);
    answered(parsed.status);
    response.writeHead(parsed.status, parsed.headers);
    response.write(parsed.rest);
    child.stdout.pipe(response);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  // A client that hangs up early makes the backend's stdin close under it: not our failure.
  child.stdin.on('error', () => undefined);
  request.pipe(child.stdin);
  child.on('close', () => {
    children.delete(child);
    if (response.headersSent) return;
    answered(500);
    response.writeHead(500, { 'content-type': 'text/plain' });
    response.end(`git-http-backend gave no answer: ${stderr}`);
  });
}

function refuseHook(branches: string[]): string {
  const refs = branches.map((branch) => `refs/heads/${branch}`).join('|');
  return [
    '#!/bin/sh',
    '# Written by the test git server: this remote refuses pushes to protected branches.',
    'while read old new ref; do',
    '  case "$ref" in',
    `    ${refs}) echo "lorenz-test: pushes to $ref are refused (protected branch)" >&2; exit 1 ;;`,
    '  esac',
    'done',
    '',
  ].join('\n');
}

async function writeFiles(dir: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
}

export async function startGitServer(options: GitServerOptions = {}): Promise<GitServer> {
  const addresses = options.addresses ?? ['127.0.0.1'];
  const users = options.users ?? {};
  const base = await mkdtemp(join(tmpdir(), 'lorenz-git-server-'));
  const root = join(base, 'repos');
  const home = join(base, 'home');
  await Promise.all([mkdir(root), mkdir(home)]);
  const backend = join((await git(home, ['--exec-path'])).trim(), 'git-http-backend');
  const { key, cert } = await makeCertificate(base, addresses);
  const tls = { key: await readText(key), cert: await readText(cert) };
  const privateRepos = new Set<string>();
  const children = new Set<ChildProcess>();
  const requests: GitRequest[] = [];
  const bare = (repo: string): string => join(root, `${repo}.git`);
  let scratch = 0;
  const workDir = async (): Promise<string> => {
    const dir = join(base, `work-${++scratch}`);
    await mkdir(dir);
    return dir;
  };

  const handle = (request: IncomingMessage, response: ServerResponse): void => {
    const address = (request.socket.localAddress ?? '').replace(/^::ffff:/, '');
    const url = new URL(request.url ?? '/', 'https://git.invalid');
    const credentials = basicAuth(request.headers.authorization);
    const record: GitRequest = {
      address,
      method: request.method ?? 'GET',
      path: request.url ?? '/',
      ...credentials,
      status: 0,
    };
    requests.push(record);
    const answered = (status: number): void => void (record.status = status);
    const push =
      url.pathname.endsWith('/git-receive-pack') ||
      url.searchParams.get('service') === 'git-receive-pack';
    const repo = repoOf(url.pathname);
    const needsAuth = push || (repo !== null && privateRepos.has(repo));
    const valid =
      credentials.user !== null &&
      Object.hasOwn(users, credentials.user) &&
      users[credentials.user] === credentials.password;
    if (needsAuth && !valid) {
      // Drain the body first: git sends a push's pack before it reads our 401.
      request.resume();
      answered(401);
      response.writeHead(401, { 'www-authenticate': 'Basic realm="git"' });
      response.end('authentication required\n');
      return;
    }
    const env = cgiEnv(request, url, address, valid ? credentials.user : null, {
      ...gitEnv(home),
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: '1',
    });
    serveCgi(backend, env, request, response, children, answered);
  };

  const [servers, port] = await listenAll(() => createServer(tls, handle), addresses);
  const url = (address = addresses[0] ?? '127.0.0.1'): string => `https://${address}:${port}`;

  /** Lands the work tree's HEAD on a branch of the bare repo. A fetch into the bare repo, not
   * a push from the clone, so a refusing pre-receive hook cannot block the fixture itself. */
  const land = async (repo: string, work: string, branch: string): Promise<string> => {
    await git(home, ['--git-dir', bare(repo), 'fetch', '-q', work, `+HEAD:refs/heads/${branch}`]);
    return (await git(home, ['rev-parse', 'HEAD'], work)).trim();
  };

  const server: GitServer = {
    url,
    repoUrl: (repo, address) => `${url(address)}/${repo}.git`,
    port,
    caFile: cert,
    root,
    requests,
    async createRepo(repo, repoOptions = {}) {
      const branch = repoOptions.defaultBranch ?? 'main';
      const path = bare(repo);
      await mkdir(dirname(path), { recursive: true });
      await git(home, ['init', '-q', '--bare', '-b', branch, path]);
      if (repoOptions.private === true) privateRepos.add(repo);
      const work = await workDir();
      await git(home, ['init', '-q', '-b', branch, work]);
      await writeFiles(work, repoOptions.files ?? { 'README.md': `# ${repo}\n` });
      await git(home, ['add', '-A'], work);
      await git(home, [...IDENTITY, 'commit', '-q', '-m', 'Initial commit'], work);
      for (let n = 2; n <= (repoOptions.commits ?? 1); n++) {
        await git(home, [...IDENTITY, 'commit', '-q', '--allow-empty', '-m', `Commit ${n}`], work);
      }
      await land(repo, work, branch);
      await rm(work, { recursive: true, force: true });
      return path;
    },
    async commit(repo, branch, files, commitOptions = {}) {
      const work = await workDir();
      await git(home, ['clone', '-q', bare(repo), work]);
      const exists = (await server.branchSha(repo, branch)) !== null;
      const start = exists ? branch : (commitOptions.from ?? 'HEAD');
      await git(home, ['checkout', '-q', '-B', branch, `origin/${start}`], work);
      await writeFiles(work, files);
      await git(home, ['add', '-A'], work);
      const message = commitOptions.message ?? `Update ${Object.keys(files).join(', ')}`;
      await git(home, [...IDENTITY, 'commit', '-q', '--allow-empty', '-m', message], work);
      const sha = await land(repo, work, branch);
      await rm(work, { recursive: true, force: true });
      return sha;
    },
    async branchSha(repo, branch) {
      const args = ['--git-dir', bare(repo), 'rev-parse', '-q', '--verify'];
      return git(home, [...args, `refs/heads/${branch}^{commit}`]).then(
        (out) => out.trim(),
        () => null,
      );
    },
    async branchHead(repo, branch, base) {
      const sha = await server.branchSha(repo, branch);
      if (sha === null) return null;
      const from = base === undefined ? 'HEAD' : `refs/heads/${base}`;
      const args = ['--git-dir', bare(repo), 'rev-list', '--count', `${from}..${sha}`];
      const aheadBy = Number((await git(home, args)).trim());
      return { sha, aheadBy };
    },
    async readFile(repo, ref, path) {
      return git(home, ['--git-dir', bare(repo), 'show', `${ref}:${path}`]).catch(() => null);
    },
    async refusePushesTo(repo, branches) {
      const hook = join(bare(repo), 'hooks', 'pre-receive');
      if (branches.length === 0) return rm(hook, { force: true });
      await writeFile(hook, refuseHook(branches));
      await chmod(hook, 0o755);
    },
    async close() {
      await Promise.all(servers.map(closeServer));
      for (const child of children) child.kill('SIGKILL');
      await rm(base, { recursive: true, force: true });
    },
  };
  return server;
}

/**
 * A folder in `base` laid out as the git-credentials Secret mounts: a file named for the host
 * holding `user:token`; returns its path.
 */
export async function credentialsFolder(
  base: string,
  user: string,
  token: string,
  host = '127.0.0.1',
): Promise<string> {
  const folder = join(base, 'credentials');
  await mkdir(folder);
  await writeFile(join(folder, host), `${user}:${token}\n`);
  return folder;
}
