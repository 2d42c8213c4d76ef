import { parseArgs } from 'node:util';
import { workspaceTreeDigest } from '../workspace/tree-digest.js';
import { UsageError } from './usage.js';

/** The flags `lorenz workspace digest` parses (their help: cli/command-help.ts). */
export const WORKSPACE_DIGEST_OPTIONS = {
  json: { type: 'boolean', default: false },
} as const;

/**
 * `lorenz workspace digest DIR`: the tree digest (docs/snapshots.md) a snapshot source's
 * `digest` must name, computed as the runner will compute it before the first hook, so a
 * person preparing a snapshot can record it. --json adds what was read.
 */
export async function workspaceDigestCommand(
  args: string[],
  out: (text: string) => void,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    strict: true,
    allowPositionals: true,
    options: WORKSPACE_DIGEST_OPTIONS,
  });
  const [directory, ...extra] = positionals;
  if (directory === undefined || extra.length > 0) {
    throw new UsageError(
      "give one directory: the prepared workspace (what a snapshot's .lorenz-source/ holds)",
    );
  }
  const tree = await workspaceTreeDigest(directory);
  out(values.json ? `${JSON.stringify(tree)}\n` : `${tree.digest}\n`);
  return 0;
}
