import { LorenzError } from '../../workflow/errors.js';
import type { Issue } from '../../workflow/issue.js';
import type { TrackerComment, TrackerWriter } from '../types.js';
import type { BoardSource, BoardStates } from './board.js';
import type { LocalComment, LocalIssueFile } from './parse.js';
import {
  type LocalBoardLocation,
  appendLocalIssueComment,
  createLocalIssue,
  parsedIssue,
  readLocalIssue,
  replaceLocalIssueComment,
  setLocalIssueStatus,
} from './write.js';

export interface LocalWriterOptions {
  source: BoardSource;
  idPrefix: string;
  states: BoardStates;
  /** The board's issues as the adapter's fetches read them, for readIssue. */
  issues: () => Promise<Issue[]>;
  now: () => Date;
}

/**
 * Comment ids are the comments' 1-based positions in the file: a comment line has no id of
 * its own, and comments are only ever appended or edited in place, so a position stays the
 * same comment for as long as nobody deletes a line by hand.
 */
function toComment(comment: LocalComment, index: number): TrackerComment {
  // A line holds one time; an edit keeps it, so it is both the creation and the last change.
  return {
    id: String(index + 1),
    body: comment.text,
    author: comment.author,
    author_id: null,
    // A board reply may be signed with an email, the one thing a local board knows of a person.
    author_email: comment.author.includes('@') ? comment.author : null,
    created_at: comment.at,
    updated_at: comment.at,
  };
}

function commentIndex(issueId: string, commentId: string): number {
  const index = /^[1-9][0-9]*$/.test(commentId.trim()) ? Number(commentId.trim()) : NaN;
  if (!Number.isSafeInteger(index)) {
    throw new LorenzError(
      'tracker_status',
      `local tracker: ${issueId} has no comment ${commentId}`,
    );
  }
  return index;
}

/**
 * The `local` board's side of the agent tools. A directory board is written through the
 * atomic helpers of write.ts; a board read from a ConfigMap can be read but not written:
 * the controller would have to patch the ConfigMap, and whoever keeps it (GitOps, say) would
 * then overwrite the agent's change.
 */
// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function createLocalWriter(options: LocalWriterOptions): TrackerWriter {
  const { source } = options;
  const location = (): LocalBoardLocation => {
    if (source.kind === 'files') {
      throw new LorenzError(
        'invalid_tracker_config',
        'local tracker: the board comes from a ConfigMap and is read-only; point tracker.path at a directory to let the agent write to it',
        { key: 'tracker.path' },
      );
    }
    return { directory: source.directory, idPrefix: options.idPrefix };
  };
  // Writes of one adapter run one at a time: each is a read, a change and a rename, and two
  // at once would let the later rename drop the earlier change.
  let queue: Promise<unknown> = Promise.resolve();
  const serially = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work, work);
    queue = run.catch(() => undefined);
    return run;
  };

  // Any name is written (the gateway decides which are allowed); a configured state keeps
  // its configured spelling, so the board reads it as that state.
  function configured(state: string): string {
    const wanted = state.trim();
    const known = [...options.states.activeStates, ...options.states.terminalStates];
    return known.find((s) => s.trim().toLowerCase() === wanted.toLowerCase())?.trim() ?? wanted;
  }

  async function fileOf(issueId: string): Promise<LocalIssueFile> {
    if (source.kind === 'directory') return readLocalIssue(location(), issueId);
    const text = source.files[`${issueId}.md`];
    if (text === undefined) {
      throw new LorenzError('tracker_status', `local tracker: no issue ${issueId} on the board`);
    }
    return parsedIssue(issueId, text);
  }

  async function current(issueId: string): Promise<Issue> {
    const issue = (await options.issues()).find((candidate) => candidate.identifier === issueId);
    if (issue === undefined) {
      throw new LorenzError('tracker_status', `local tracker: no issue ${issueId} on the board`);
    }
    return issue;
  }

  async function commentAt(issueId: string, index: number): Promise<TrackerComment> {
    const comment = (await fileOf(issueId)).comments[index - 1];
    if (comment === undefined) {
      throw new LorenzError('tracker_status', `local tracker: ${issueId} has no comment ${index}`);
    }
    return toComment(comment, index - 1);
  }

  return {
    async readIssue(issueId) {
      return (await options.issues()).find((issue) => issue.identifier === issueId) ?? null;
    },
    async listComments(issueId) {
      return (await fileOf(issueId)).comments.map(toComment);
    },
    comment: (issueId, body) =>
      serially(async () => {
        await appendLocalIssueComment(location(), issueId, body, options.now);
        // Writes are serialized, so the last comment is the one just appended.
        const count = (await fileOf(issueId)).comments.length;
        return commentAt(issueId, count);
      }),
    updateComment: (issueId, commentId, body) =>
      serially(async () => {
        const index = commentIndex(issueId, commentId);
        await replaceLocalIssueComment(location(), issueId, index, body);
        return commentAt(issueId, index);
      }),
    updateState: (issueId, state) =>
      serially(async () => {
        await setLocalIssueStatus(location(), issueId, configured(state));
        return current(issueId);
      }),
    createIssue: (input) =>
      serially(async () => {
        const issue = {
          title: input.title,
          description: input.description ?? null,
          status: configured(input.state ?? ''),
        };
        const id = await createLocalIssue(location(), issue, options.now);
        return current(id);
      }),
  };
}
