// The code host for a review config: one switch on the kind, so callers never import an
// implementation directly.
import { LorenzError } from '../workflow/errors.js';
import { createGithubCodeHost } from './github.js';
import type { CodeHost, CodeHostOptions } from './types.js';

export type * from './types.js';
export { createGithubCodeHost } from './github.js';

export function createCodeHost(options: CodeHostOptions): CodeHost {
  switch (options.kind) {
    case 'github':
      return createGithubCodeHost(options);
    case 'gitlab':
      // The GitLab code host lives in its own module (./gitlab.js), added where it is built in.
      throw new LorenzError('invalid_codehost_config', 'gitlab code host not built in', {
        codehost: 'gitlab',
      });
  }
}
