// What tests do to the GitLab stand-in's state, as a person or CI would on GitLab: open a
// merge request, comment, approve, request changes, run a pipeline, merge, close.
import type {
  FakeCommitStatus,
  FakeDiscussion,
  FakeJob,
  FakeMergeRequest,
  FakeNote,
  FakePipeline,
  FakePosition,
} from './gitlab-data.js';

/** A branch head as the compare and branch endpoints report it. */
export interface BranchHead {
  sha: string;
  aheadBy: number;
}

/** Where branch heads come from: the state's own map, or a real git server. */
export type BranchHeads = (
  project: string,
  branch: string,
  base: string | null,
) => Promise<BranchHead | null>;

export class GitlabState {
  mergeRequests: FakeMergeRequest[] = [];
  discussions = new Map<number, FakeDiscussion[]>();
  approvals = new Map<number, string[]>();
  reviewers = new Map<number, Map<string, string>>();
  pipelines: FakePipeline[] = [];
  /** Statuses posted from outside CI; the jobs of a commit's pipelines are statuses too. */
  statuses = new Map<string, FakeCommitStatus[]>();
  branches = new Map<string, BranchHead>();
  private clock = Date.parse('2026-12-01T09:00:00.000Z');
  private ids = 1;

  /** A later time for each event, so "oldest first" has a real order to keep. */
  tick(): string {
    this.clock += 1000;
    return new Date(this.clock).toISOString();
  }

  nextId(): number {
    this.ids += 1;
    return this.ids;
  }

  setBranch(name: string, sha: string, aheadBy: number): void {
    this.branches.set(name, { sha, aheadBy });
  }

  /** The open merge request of a branch, as GitLab would list it. */
  openMergeRequest(branch: string): FakeMergeRequest | undefined {
    return this.mergeRequests.find((mr) => mr.sourceBranch === branch && mr.state === 'opened');
  }

  mergeRequest(iid: number): FakeMergeRequest {
    const found = this.mergeRequests.find((mr) => mr.iid === iid);
    if (found === undefined) throw new Error(`no merge request !${iid}`);
    return found;
  }

  addMergeRequest(input: Partial<FakeMergeRequest> & { sourceBranch: string }): FakeMergeRequest {
    const at = this.tick();
    const mr: FakeMergeRequest = {
      iid: this.mergeRequests.reduce((max, item) => Math.max(max, item.iid), 0) + 1,
      title: `Merge ${input.sourceBranch}`,
      description: '',
      state: 'opened',
      targetBranch: 'main',
      sha: this.branches.get(input.sourceBranch)?.sha ?? null,
      sourceProjectId: 0,
      createdAt: at,
      updatedAt: at,
      ...input,
    };
    this.mergeRequests.push(mr);
    return mr;
  }

  /** A note in a new discussion, or a reply in the discussion named. */
  addDiscussionNote(
    iid: number,
    note: {
      body: string;
      author: string;
      system?: boolean;
      position?: Partial<FakePosition>;
      discussionId?: string;
    },
  ): FakeNote {
    const list = this.discussions.get(iid) ?? [];
    this.discussions.set(iid, list);
    const position: FakePosition | null =
      note.position === undefined
        ? null
        : { new_path: null, old_path: null, new_line: null, old_line: null, ...note.position };
    const existing =
      note.discussionId === undefined
        ? undefined
        : list.find((discussion) => discussion.id === note.discussionId);
    const made: FakeNote = {
      id: this.nextId(),
      body: note.body,
      author: note.author,
      system: note.system ?? false,
      type: position !== null ? 'DiffNote' : existing !== undefined ? 'DiscussionNote' : null,
      position,
      createdAt: this.tick(),
    };
    if (existing !== undefined) existing.notes.push(made);
    else
      list.push({ id: note.discussionId ?? made.id.toString(16).padStart(40, '0'), notes: [made] });
    return made;
  }

  setApproved(iid: number, username: string, approved = true): void {
    const list = (this.approvals.get(iid) ?? []).filter((name) => name !== username);
    this.approvals.set(iid, approved ? [...list, username] : list);
  }

  /** unreviewed, review_started, reviewed, requested_changes, approved, unapproved. */
  setReviewerState(iid: number, username: string, state: string): void {
    const map = this.reviewers.get(iid) ?? new Map<string, string>();
    map.set(username, state);
    this.reviewers.set(iid, map);
  }

  /** A new pipeline for the commit (the newest counts), its status made from its jobs. */
  setPipeline(
    sha: string,
    jobs: Omit<FakeJob, 'id'>[],
    options: { ref?: string; status?: string } = {},
  ): FakePipeline {
    const made = jobs.map((job) => ({ ...job, id: this.nextId() }));
    const failed = made.some((job) => job.status === 'failed' && job.allowFailure !== true);
    const running = made.some((job) => ['running', 'pending', 'created'].includes(job.status));
    const pipeline: FakePipeline = {
      id: this.nextId(),
      sha,
      ref: options.ref ?? 'main',
      status: options.status ?? (failed ? 'failed' : running ? 'running' : 'success'),
      jobs: made,
    };
    this.pipelines.push(pipeline);
    return pipeline;
  }

  addCommitStatus(sha: string, status: Omit<FakeCommitStatus, 'id'>): FakeCommitStatus {
    const made = { ...status, id: this.nextId() };
    this.statuses.set(sha, [...(this.statuses.get(sha) ?? []), made]);
    return made;
  }

  merge(iid: number): void {
    const mr = this.mergeRequest(iid);
    mr.state = 'merged';
    mr.updatedAt = this.tick();
  }

  close(iid: number): void {
    const mr = this.mergeRequest(iid);
    mr.state = 'closed';
    mr.updatedAt = this.tick();
  }
}
