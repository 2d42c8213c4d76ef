import type { BoardComment } from '../workflow/board-comments.js';
import { LorenzError } from '../workflow/errors.js';
import { boardComments, refuseBoardEdit } from './memory-comments.js';
import type { Issue } from '../workflow/issue.js';
import type { TrackerAdapter, TrackerComment, TrackerWriter } from './types.js';

const stateKey = (state: string | null): string => (state ?? '').trim().toLowerCase();

export interface MemoryTrackerStates {
  activeStates: readonly string[];
  terminalStates?: readonly string[];
}

export interface MemoryTrackerOptions {
  /** The clock for comment and state-change times; injectable for tests. */
  now?: () => Date;
  /** The board's own comments (`tracker.issues[].comments`), one list per issue of `source`. */
  comments?: readonly (readonly BoardComment[])[];
}

/**
 * The `memory` tracker: the issues listed in WORKFLOW.md's `tracker.issues`. Changing the
 * Workflow changes the board, so a demo or a test can move an issue through its states with
 * `kubectl apply` and no outside service. The agent tools' writes live in this adapter
 * instance only: they show in its later fetches and vanish when the Workflow is read anew.
 * The board's comments come first in listComments; one without a time counts as made when
 * this instance was, so a reply added by `kubectl apply` is newer than what waits for it.
 */
export function createMemoryTracker(
  source: readonly Issue[],
  states: MemoryTrackerStates,
  options: MemoryTrackerOptions = {},
): TrackerAdapter {
  // A copy, so a write never reaches the parsed config another reader may hold.
  const issues: Issue[] = source.map((issue) => structuredClone(issue));
  const now = options.now ?? (() => new Date());
  /**
   * An issue as the board has it now: a blocker that is itself on the board carries that
   * issue's current state (moving BOARD-1 to Done unblocks what it blocked), as a tracker
   * with live relations answers.
   */
  const live = (issue: Issue): Issue => ({
    ...issue,
    blocked_by: issue.blocked_by.map((blocker) => {
      const found = issues.find(
        (candidate) =>
          (blocker.id !== null && candidate.id === blocker.id) ||
          (blocker.identifier !== null && candidate.identifier === blocker.identifier),
      );
      return found ? { ...blocker, state: found.state, state_type: found.state_type } : blocker;
    }),
  });
  const inStates = (wanted: readonly string[]) => {
    const keys = new Set(wanted.map(stateKey));
    return issues.filter((issue) => keys.has(stateKey(issue.state))).map(live);
  };
  return {
    kind: 'memory',
    fetchCandidates: () => Promise.resolve(inStates(states.activeStates)),
    fetchByIds(ids) {
      const wanted = new Set(ids);
      return Promise.resolve(
        issues
          .filter((issue) => wanted.has(issue.id ?? '') || wanted.has(issue.identifier))
          .map(live),
      );
    },
    fetchByStates: (wanted) => Promise.resolve(inStates(wanted)),
    writer: memoryWriter(issues, states, now, boardComments(source, options.comments, now)),
  };
}

// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the comments and the board it keeps
function memoryWriter(
  issues: Issue[],
  states: MemoryTrackerStates,
  now: () => Date,
  board: ReadonlyMap<string, readonly TrackerComment[]>,
): TrackerWriter {
  const comments = new Map<string, TrackerComment[]>();
  let lastCommentId = 0;

  function find(issueId: string): Issue | undefined {
    return issues.find((issue) => issue.id === issueId || issue.identifier === issueId);
  }

  function existing(issueId: string): Issue {
    const issue = find(issueId);
    if (issue === undefined) {
      throw new LorenzError('tracker_status', `memory tracker: no issue ${issueId} on the board`, {
        tracker: 'memory',
        status: 404,
      });
    }
    return issue;
  }

  // Keyed by identifier, so a comment made through the id and one through the identifier
  // land on the same list.
  function commentsOf(issue: Issue): TrackerComment[] {
    let list = comments.get(issue.identifier);
    if (list === undefined) {
      list = [];
      comments.set(issue.identifier, list);
    }
    return list;
  }

  function withText(body: string, what: string): string {
    if (body.trim() === '') {
      throw new LorenzError('tracker_status', `memory tracker: ${what} needs text`, {
        tracker: 'memory',
        status: 400,
      });
    }
    return body;
  }

  return {
    readIssue: (issueId) => settle(() => structuredCloneOrNull(find(issueId))),
    listComments: (issueId) =>
      settle(() => {
        const issue = existing(issueId);
        return [...(board.get(issue.identifier) ?? []), ...commentsOf(issue)].map((comment) => ({
          ...comment,
        }));
      }),
    comment: (issueId, body) =>
      settle(() => {
        const list = commentsOf(existing(issueId));
        const at = now().toISOString();
        lastCommentId += 1;
        const comment: TrackerComment = {
          id: String(lastCommentId),
          body: withText(body, 'a comment'),
          author: 'agent',
          author_id: null,
          author_email: null,
          created_at: at,
          updated_at: at,
        };
        list.push(comment);
        return { ...comment };
      }),
    updateComment: (issueId, commentId, body) =>
      settle(() => {
        const issue = existing(issueId);
        refuseBoardEdit(board.get(issue.identifier), issueId, commentId);
        const comment = commentsOf(issue).find((c) => c.id === commentId);
        if (comment === undefined) {
          throw new LorenzError(
            'tracker_status',
            `memory tracker: issue ${issueId} has no comment ${commentId}`,
            { tracker: 'memory', status: 404 },
          );
        }
        comment.body = withText(body, 'a comment');
        comment.updated_at = now().toISOString();
        return { ...comment };
      }),
    updateState: (issueId, state) =>
      settle(() => {
        const issue = existing(issueId);
        issue.state = stateName(state, states);
        // A board has no state types; the configured spelling alone says which state it is.
        issue.state_type = null;
        issue.updated_at = now().toISOString();
        return structuredClone(issue);
      }),
  };
}

/** Runs `work` so that what it throws rejects the promise, as a tracker's failure would. */
function settle<T>(work: () => T): Promise<T> {
  return new Promise((resolve) => resolve(work()));
}

const structuredCloneOrNull = (issue: Issue | undefined): Issue | null =>
  issue === undefined ? null : structuredClone(issue);

/**
 * An inline board has no list of states of its own, so any name is taken (the gateway
 * checks the allowed ones); a configured state keeps its configured spelling, so fetches by
 * state find the issue whatever case the agent used.
 */
function stateName(state: string, states: MemoryTrackerStates): string {
  const wanted = state.trim();
  if (wanted === '' || /[\r\n]/.test(wanted)) {
    throw new LorenzError(
      'invalid_tracker_config',
      'memory tracker: a state is one non-empty line',
      {
        tracker: 'memory',
      },
    );
  }
  const known = [...states.activeStates, ...(states.terminalStates ?? [])];
  return known.find((name) => stateKey(name) === stateKey(wanted))?.trim() ?? wanted;
}
