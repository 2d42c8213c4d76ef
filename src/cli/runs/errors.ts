import { KubeApiError, statusOf } from '../../controller/runtime/client.js';
import { ArchiveError } from '../../archive/types.js';
import { ArchiveReadError } from './archive-reader.js';

/**
 * The run commands' failures as one line each, with a stable code: the cluster refused
 * (`kube_forbidden`, `kube_unauthorized`, `kube_error`), the read API refused (its own code:
 * `forbidden`, `unauthenticated`, …), or the store did (`archive_*`). Exit 1.
 */
export function runCommandFailure(error: unknown): { code: string; message: string } | undefined {
  if (error instanceof ArchiveReadError) return { code: error.code, message: error.message };
  if (error instanceof ArchiveError) return { code: error.code, message: error.message };
  if (error instanceof KubeApiError) {
    const status = statusOf(error);
    const code =
      status === 403 ? 'kube_forbidden' : status === 401 ? 'kube_unauthorized' : 'kube_error';
    return { code, message: error.message };
  }
  return undefined;
}

export async function reportingFailures(
  err: (text: string) => void,
  body: () => Promise<number>,
): Promise<number> {
  try {
    return await body();
  } catch (error) {
    const failure = runCommandFailure(error);
    if (!failure) throw error;
    err(`lorenz: ${failure.code}: ${failure.message}\n`);
    return 1;
  }
}
