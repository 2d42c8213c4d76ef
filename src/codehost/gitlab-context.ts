import type { GitlabTransport } from './gitlab-transport.js';

/** What the parts of the GitLab code host share: the transport and the project. */
export interface GitlabContext {
  transport: GitlabTransport;
  /** `group/sub/project` as given. */
  repository: string;
  onWarning: (message: string) => void;
}

/**
 * A URL under the project: GitLab addresses it by its URL-encoded path
 * (`group%2Fsub%2Fproject`), so nested groups need no id look-up.
 */
export function projectUrl(
  context: GitlabContext,
  suffix: string,
  query: Record<string, string> = {},
): string {
  const url = new URL(
    `${context.transport.apiUrl}/projects/${encodeURIComponent(context.repository)}${suffix}`,
  );
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  return url.toString();
}
