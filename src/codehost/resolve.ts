// Which code host a Workflow's review loop talks to, worked out from its `review:` settings
// and the repository's clone address, and the token out of the git credentials it already
// has. Nothing here makes a request; a wrong setting fails before the first one.
import { isHttpUrl } from '../tracker/http.js';
import { parseStoreLine, secretToken } from '../workspace/git/index.js';
import { LorenzError } from '../workflow/errors.js';
import type { ReviewConfig } from '../workflow/review-config.js';
import type { CodeHostKind } from './types.js';

export interface ResolvedCodeHost {
  kind: CodeHostKind;
  /** The API root without a trailing slash. */
  apiUrl: string;
  /** `owner/name` (GitHub), `group/sub/project` (GitLab). */
  repository: string;
  /** The clone address's host and port as written (`git.example:8443`): the git credentials key. */
  host: string;
}

const PUBLIC_HOSTS: Record<string, { kind: CodeHostKind; apiUrl: string }> = {
  'github.com': { kind: 'github', apiUrl: 'https://api.github.com' },
  'gitlab.com': { kind: 'gitlab', apiUrl: 'https://gitlab.com/api/v4' },
};

/** Where a self-hosted server keeps its API, by kind. */
const API_PATHS: Record<CodeHostKind, string> = { github: '/api/v3', gitlab: '/api/v4' };

function invalid(message: string, keys: readonly string[]): LorenzError {
  return new LorenzError('invalid_codehost_config', message, { keys: [...keys] });
}

interface CloneAddress {
  host: string;
  /** host[:port], as the address writes it. */
  authority: string;
  /** Where the web (and the API) is served: `https://host[:port]`. */
  origin: string;
  path: string;
}

// `git@host:group/project.git`, git's scp-like form (no scheme; a colon before the path).
const SCP_LIKE = /^(?:[^@/\s]+@)?([^:/\s]+):(?!\/\/)(.+)$/;

/** The host and path of a clone address; the address is never quoted (it may hold a token). */
function parseCloneUrl(cloneUrl: string): CloneAddress {
  const value = cloneUrl.trim();
  const scp = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? null : SCP_LIKE.exec(value);
  if (scp !== null) {
    const host = (scp[1] ?? '').toLowerCase();
    return { host, authority: host, origin: `https://${host}`, path: scp[2] ?? '' };
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid('review: the clone address is neither a URL nor host:path', [
      'workspace.git.repo',
    ]);
  }
  if (!['https:', 'http:', 'ssh:'].includes(url.protocol) || url.hostname === '') {
    throw invalid('review: the clone address must be https, ssh or host:path', [
      'workspace.git.repo',
    ]);
  }
  const host = url.hostname.toLowerCase();
  // An ssh port is not the web's; the API is served over https on the usual port.
  const origin = url.protocol === 'ssh:' ? `https://${host}` : `${url.protocol}//${url.host}`;
  return {
    host,
    authority: url.host.toLowerCase(),
    origin,
    path: decodeURIComponent(url.pathname),
  };
}

function repositoryOf(kind: CodeHostKind, path: string): string {
  const segments = path
    .replace(/\.git\/*$/, '')
    .split('/')
    .filter((segment) => segment !== '');
  const fits = kind === 'github' ? segments.length === 2 : segments.length >= 2;
  if (!fits || segments.some((segment) => segment === '.' || segment === '..')) {
    const shape = kind === 'github' ? 'owner/name' : 'group/project';
    throw invalid(`review: the clone address's path is not ${shape}`, ['workspace.git.repo']);
  }
  return segments.join('/');
}

function apiUrlOf(value: string): string {
  const url = URL.parse(value.trim());
  if (url === null) throw invalid('review.api_url: must be an http(s) URL', ['review.api_url']);
  if (!isHttpUrl(url) || url.search !== '') {
    throw invalid('review.api_url: must be an http(s) URL without a query', ['review.api_url']);
  }
  return url.toString().replace(/\/+$/, '');
}

/**
 * The code host of a repository: its kind from review.host or the clone address's host
 * (github.com, gitlab.com), its API root from review.api_url or the host's default
 * (`<origin>/api/v3` for GitHub Enterprise, `<origin>/api/v4` for GitLab), its repository from
 * the clone address's path.
 */
export function resolveCodeHost(
  review: Pick<ReviewConfig, 'host' | 'apiUrl'>,
  cloneUrl: string,
): ResolvedCodeHost {
  const address = parseCloneUrl(cloneUrl);
  const known = PUBLIC_HOSTS[address.host];
  const kind = review.host ?? known?.kind;
  if (kind === undefined) {
    throw invalid(
      `review.host: the clone address's host ${address.host} is neither github.com nor gitlab.com; set review.host to github or gitlab`,
      ['review.host'],
    );
  }
  let apiUrl: string;
  if (review.apiUrl !== null && review.apiUrl.trim() !== '') apiUrl = apiUrlOf(review.apiUrl);
  else if (known?.kind === kind) apiUrl = known.apiUrl;
  else apiUrl = `${address.origin}${API_PATHS[kind]}`;
  return {
    kind,
    apiUrl,
    repository: repositoryOf(kind, address.path),
    host: address.authority,
  };
}

/**
 * The token in a git credentials Secret's value, read as the run Pods' credential helper
 * reads it: `token`, `username:token`, or a credential-store line `https://user:token@host`.
 */
export function tokenFromCredential(text: string): string {
  const value = text.trim();
  let token: string;
  if (/^https?:\/\//i.test(value)) {
    try {
      token = secretToken(parseStoreLine(value, 'the git credentials Secret').secret);
    } catch {
      throw invalid('review: the git credential is not https://user:token@host', [
        'spec.git.credentialsSecretRef',
      ]);
    }
  } else {
    token = secretToken(value);
  }
  if (token === '' || /\s/.test(token)) {
    throw invalid('review: the git credential holds no token', ['spec.git.credentialsSecretRef']);
  }
  return token;
}
