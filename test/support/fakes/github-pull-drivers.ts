// What a test does to the stand-in's pull requests in place of people and CI: a reviewer
// reviews or comments, a check run or a commit status changes, someone merges or closes.
import * as data from './github-code-data.js';
import { type PullState, stamp } from './github-pulls.js';

export interface PullDrivers {
  /** The pull requests opened so far, oldest first (the stand-in's own objects). */
  pulls(): data.FakePull[];
  addPullReview(
    number: number,
    review: {
      author: string | null;
      state: data.FakeReview['state'];
      body?: string;
      commitSha?: string;
    },
  ): data.FakeReview;
  addReviewComment(
    number: number,
    comment: { author: string | null; body: string; path: string; line: number | null },
  ): data.FakeReviewComment;
  /** A conversation comment on the pull request (GitHub's issue comment). */
  addIssueComment(
    number: number,
    comment: { author: string | null; body: string },
  ): data.FakePullComment;
  /** Creates or replaces (by name) a check run on a commit. */
  setCheckRun(
    sha: string,
    run: {
      name: string;
      status: data.FakeCheckRun['status'];
      conclusion?: string | null;
      summary?: string | null;
      text?: string | null;
    },
  ): data.FakeCheckRun;
  /** Sets a commit status; the latest one of a context is the one GitHub shows. */
  setCommitStatus(
    sha: string,
    status: {
      context: string;
      state: data.FakeStatus['state'];
      description?: string | null;
      targetUrl?: string | null;
    },
  ): data.FakeStatus;
  mergePull(number: number): data.FakePull;
  closePull(number: number): data.FakePull;
  /** A branch as the stand-in knows it when no `branchHead` was injected. */
  setBranch(branch: string, head: Partial<data.BranchHead>): data.BranchHead;
}

let ids = 0;
const nextId = (): number => 60_000_000 + ++ids;

function pullOf(state: PullState, number: number): data.FakePull {
  const pull = state.pullList.find((candidate) => candidate.number === number);
  if (pull === undefined) throw new Error(`the stand-in has no pull request #${number}`);
  return pull;
}

/** `list` with `added` in place of what it replaces on the same commit: the latest one counts. */
function replaced<T extends { sha: string }>(list: T[], added: T, same: (old: T) => boolean): T[] {
  return [...list.filter((old) => !(old.sha === added.sha && same(old))), added];
}

export function pullDrivers(state: PullState): PullDrivers {
  return {
    pulls: () => state.pullList,
    addPullReview(number, review) {
      const pull = pullOf(state, number);
      const added: data.FakeReview = {
        id: nextId(),
        pull: number,
        author: review.author,
        state: review.state,
        body: review.body ?? '',
        commitSha: review.commitSha ?? pull.headSha,
        submittedAt: stamp(),
      };
      state.reviews.push(added);
      return added;
    },
    addReviewComment(number, comment) {
      const pull = pullOf(state, number);
      const added: data.FakeReviewComment = {
        id: nextId(),
        pull: number,
        ...comment,
        originalLine: comment.line ?? 1,
        commitSha: pull.headSha,
        createdAt: stamp(),
      };
      state.reviewComments.push(added);
      return added;
    },
    addIssueComment(number, comment) {
      pullOf(state, number);
      const added: data.FakePullComment = {
        id: nextId(),
        pull: number,
        ...comment,
        createdAt: stamp(),
      };
      state.pullComments.push(added);
      return added;
    },
    setCheckRun(sha, run) {
      const { conclusion = null, summary = null, text = null } = run;
      const added: data.FakeCheckRun = { ...run, id: nextId(), sha, conclusion, summary, text };
      state.checkRuns = replaced(state.checkRuns, added, (old) => old.name === run.name);
      return added;
    },
    setCommitStatus(sha, status) {
      const { description = null, targetUrl = null } = status;
      const added: data.FakeStatus = { ...status, id: nextId(), sha, description, targetUrl };
      state.statuses = replaced(state.statuses, added, (old) => old.context === status.context);
      return added;
    },
    mergePull(number) {
      const pull = pullOf(state, number);
      Object.assign(pull, { state: 'closed', merged: true, draft: false, updatedAt: stamp() });
      return pull;
    },
    closePull(number) {
      const pull = pullOf(state, number);
      Object.assign(pull, { state: 'closed', updatedAt: stamp() });
      return pull;
    },
    setBranch(branch, head) {
      const set = { sha: head.sha ?? data.fakeSha(branch), aheadBy: head.aheadBy ?? 1 };
      state.branches.set(branch, set);
      return set;
    },
  };
}
