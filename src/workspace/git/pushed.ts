import type { GitCommit } from '../../workflow/events.js';
import { git, succeeded, trackingRef } from './commands.js';
import { commandContext, report, type GitWorkspaceOptions } from './context.js';

/**
 * What an attempt pushed: the commits on the remote-tracking branch that none of the
 * remote's tips had when the attempt began. `git push` moves the remote-tracking ref
 * (refs/remotes/origin/<branch>, which the workspace's fetch refspec covers), so this needs
 * no network: the clone knows what it pushed. Lorenz's own merge-up push counts (it is a
 * push of the attempt); the default branch's commits it merged in do not (its tip is in the
 * base).
 */
export interface PushBase {
  /** The remote-tracking tips when the attempt began (none in a clone of an empty remote). */
  tips: readonly string[];
}

/** At most this many commits are listed (the newest); the count says how many there were. */
export const PUSHED_COMMITS_LIMIT = 50;
/** A subject is cut here, as one line of a table. */
export const PUSHED_SUBJECT_LIMIT = 200;

const SHA = /^[0-9a-f]{40,64}$/;

export async function pushBase(options: GitWorkspaceOptions): Promise<PushBase> {
  const listed = await git(
    commandContext(options),
    'for-each-ref',
    '--format=%(objectname)',
    'refs/remotes/origin',
  );
  if (!succeeded(listed)) return { tips: [] };
  return {
    tips: [...new Set(listed.output.split('\n').map((line) => line.trim()))].filter((sha) =>
      SHA.test(sha),
    ),
  };
}

/** One `SHA<US>subject` line of `git log` into a commit; null for anything else. */
function commitOf(line: string): GitCommit | null {
  const separator = line.indexOf('\x1f');
  if (separator < 0) return null;
  const sha = line.slice(0, separator);
  if (!SHA.test(sha)) return null;
  const subject = line.slice(separator + 1).trim();
  return {
    sha,
    subject:
      subject.length > PUSHED_SUBJECT_LIMIT
        ? `${subject.slice(0, PUSHED_SUBJECT_LIMIT)}…`
        : subject,
  };
}

/** The commits pushed to the branch since `base`, newest first, at most the limit. */
export async function pushedCommits(
  options: GitWorkspaceOptions,
  base: PushBase,
): Promise<{ count: number; commits: GitCommit[] }> {
  const context = commandContext(options);
  const tracking = trackingRef(options.branch);
  const exists = await git(context, 'rev-parse', '--verify', '--quiet', `${tracking}^{commit}`);
  if (!succeeded(exists)) return { count: 0, commits: [] };
  const range = [tracking, ...(base.tips.length > 0 ? ['--not', ...base.tips] : [])];
  const counted = await git(context, 'rev-list', '--count', ...range);
  const count = succeeded(counted) ? Number.parseInt(counted.output.trim(), 10) || 0 : 0;
  if (count === 0) return { count: 0, commits: [] };
  const logged = await git(
    context,
    'log',
    `--max-count=${PUSHED_COMMITS_LIMIT}`,
    '--format=%H%x1f%s',
    ...range,
  );
  const commits = succeeded(logged)
    ? logged.output.split('\n').flatMap((line) => commitOf(line) ?? [])
    : [];
  return { count: Math.max(count, commits.length), commits };
}

/**
 * At the attempt's end (after after_run, which may push too): a `push` git record naming
 * the commits pushed, when there were any. Best-effort: a git that fails here says nothing,
 * and the attempt's outcome is never changed by it.
 */
export async function reportPushed(options: GitWorkspaceOptions, base: PushBase): Promise<void> {
  const startedAt = Date.now();
  try {
    // A cancelled run still reports what it pushed (after_run ran for it too): the local
    // reads here are bounded by the timeout, not by the run's signal.
    const reading = { ...options, signal: new AbortController().signal };
    const { count, commits } = await pushedCommits(reading, base);
    if (count === 0) return;
    const listed = commits.length < count ? ` (the newest ${commits.length} listed)` : '';
    report(
      options,
      'push',
      'completed',
      `pushed ${count} commit${count === 1 ? '' : 's'} to ${options.branch}${listed}`,
      startedAt,
      undefined,
      commits,
    );
  } catch {
    // Best-effort, as above.
  }
}
