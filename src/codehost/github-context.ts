// The settings of one GitHub code host checked and turned into what every request needs: the
// transport (in its codehost role), the repository's API URL and GraphQL's.
import { isHttpUrl, transportReach } from '../tracker/http.js';
import { EtagCache, SHARED_ETAG_CACHE } from '../tracker/github/cache.js';
import { parseRepository } from '../tracker/github/settings.js';
import {
  GITHUB_REQUEST_TIMEOUT_MS,
  type GithubTransport,
  githubFailure,
} from '../tracker/github/transport.js';
import { LorenzError } from '../workflow/errors.js';
import { readPullRequest } from './github-normalize.js';
import type { CodeHostOptions, PullRequest } from './types.js';

export interface GithubCodeHostOptions extends CodeHostOptions {
  /** Remembered answers for If-None-Match; default the cache the GitHub tracker shares. */
  cache?: EtagCache;
  /** Per request, the answer's body included; default 30 s. */
  timeoutMs?: number;
  /** Pages of one list at most; default 10. */
  maxPages?: number;
  now?: () => number;
}

export interface Context {
  transport: GithubTransport;
  /** The API root without a trailing slash. */
  apiUrl: string;
  /** `<api>/repos/<owner>/<name>` */
  repoUrl: string;
  graphqlUrl: string;
  owner: string;
  maxPages: number | undefined;
  onWarning: ((message: string) => void) | undefined;
}

function invalid(message: string): LorenzError {
  return new LorenzError('invalid_codehost_config', message, { codehost: 'github' });
}

/** The API root without a trailing slash; http(s) only, since the token goes with it. */
function apiRoot(apiUrl: string): URL {
  const url = URL.parse(apiUrl.trim());
  if (url === null) throw invalid('github code host: the API URL is not a URL');
  if (!isHttpUrl(url) || url.search !== '') {
    throw invalid('github code host: the API URL must be http(s) without a query');
  }
  url.pathname = url.pathname.replace(/\/+$/, '');
  return url;
}

/**
 * GraphQL's endpoint: `https://api.github.com/graphql`, and on GitHub Enterprise Server,
 * whose REST root is `<origin>/api/v3`, `<origin>/api/graphql`.
 */
export function githubGraphqlUrl(apiUrl: string): string {
  const root = apiRoot(apiUrl);
  const path = root.pathname.replace(/\/+$/, '');
  root.pathname = /\/api\/v3$/.test(path)
    ? path.replace(/\/api\/v3$/, '/api/graphql')
    : `${path}/graphql`;
  return root.toString();
}

export function contextOf(options: GithubCodeHostOptions): Context {
  if (options.token.trim() === '') throw invalid('github code host: no token');
  let owner: string;
  let name: string;
  try {
    ({ owner, repo: name } = parseRepository(options.repository));
  } catch {
    throw invalid(`github code host: ${JSON.stringify(options.repository)} is not owner/name`);
  }
  const root = apiRoot(options.apiUrl).toString().replace(/\/+$/, '');
  return {
    transport: {
      token: options.token.trim(),
      ...transportReach(options, GITHUB_REQUEST_TIMEOUT_MS),
      cache: options.cache ?? SHARED_ETAG_CACHE,
      role: 'codehost',
    },
    apiUrl: root,
    repoUrl: `${root}/repos/${owner}/${name}`,
    graphqlUrl: githubGraphqlUrl(options.apiUrl),
    owner,
    maxPages: options.maxPages,
    onWarning: options.onWarning,
  };
}

/** An answer whose shape is not the documented one. */
export function malformed(context: Context, what: string): LorenzError {
  return githubFailure(
    context.transport,
    'codehost_response',
    `GitHub's answer for ${what} is not what its API documents`,
  );
}

export function pullOf(context: Context, body: unknown, what: string): PullRequest {
  const pull = readPullRequest(body);
  if (pull === null) throw malformed(context, what);
  return pull;
}
