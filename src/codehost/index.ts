// The code host for a review config: one switch on the kind, so callers never import an
// implementation directly.
import { createGithubCodeHost } from './github.js';
import { createGitlabCodeHost } from './gitlab.js';
import type { CodeHost, CodeHostOptions } from './types.js';

export type * from './types.js';
export { createGithubCodeHost } from './github.js';
export { createGitlabCodeHost } from './gitlab.js';

export function createCodeHost(options: CodeHostOptions): CodeHost {
  switch (options.kind) {
    case 'github':
      return createGithubCodeHost(options);
    case 'gitlab':
      return createGitlabCodeHost(options);
  }
}
