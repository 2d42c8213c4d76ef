import type {
  BranchComparison,
  CheckResult,
  CodeHost,
  NewPullRequest,
  PullRequest,
  PullRequestFeedback,
} from '../../../src/codehost/types.js';
import { normalizeIssue, type Issue } from '../../../src/workflow/issue.js';
import type { TrackerComment, TrackerWriter } from '../../../src/tracker/types.js';
import { LorenzError } from '../../../src/workflow/errors.js';

/**
 * An in-memory code host for the review controller's unit tests: branches with how far
 * they are ahead, pull requests, feedback and checks the test sets, and every call logged.
 * `failNext` makes the next call throw as a host that is down would.
 */
export class FakeCodeHost implements CodeHost {
  readonly kind = 'github' as const;
  readonly repository = 'acme/app';
  readonly calls: string[] = [];
  readonly branches = new Map<string, BranchComparison>();
  readonly pulls: PullRequest[] = [];
  feedbackOf = new Map<number, PullRequestFeedback>();
  checksOf = new Map<string, CheckResult[]>();
  failNext: string | null = null;

  private call(name: string): void {
    this.calls.push(name);
    if (this.failNext !== null) {
      const message = this.failNext;
      this.failNext = null;
      throw new LorenzError('codehost_status', message);
    }
  }

  async identity() {
    this.call('identity');
    return 'lorenz-bot';
  }
  async defaultBranch() {
    this.call('defaultBranch');
    return 'main';
  }
  async compareBranches(base: string, head: string) {
    this.call(`compare ${base}...${head}`);
    return this.branches.get(head) ?? null;
  }
  async findOpenPullRequest(head: string) {
    this.call(`find ${head}`);
    return this.pulls.find((pull) => pull.headBranch === head && pull.state === 'open') ?? null;
  }
  async openPullRequest(input: NewPullRequest) {
    this.call(`open ${input.head}${input.draft ? ' (draft)' : ''}: ${input.title}`);
    const number = this.pulls.length + 1;
    const pull: PullRequest = {
      number,
      url: `https://github.example/acme/app/pull/${number}`,
      state: 'open',
      draft: input.draft,
      title: input.title,
      headBranch: input.head,
      headSha: this.branches.get(input.head)?.headSha ?? 'sha',
      baseBranch: input.base,
    };
    this.pulls.push(pull);
    return pull;
  }
  async getPullRequest(number: number) {
    this.call(`get #${number}`);
    const pull = this.pulls.find((each) => each.number === number);
    if (!pull) throw new LorenzError('codehost_status', `no pull request #${number}`);
    return { ...pull };
  }
  async markReady(pull: PullRequest) {
    this.call(`ready #${pull.number}`);
    const stored = this.pulls.find((each) => each.number === pull.number);
    if (stored) stored.draft = false;
    return { ...pull, draft: false };
  }
  async feedback(pull: PullRequest) {
    this.call(`feedback #${pull.number}`);
    return this.feedbackOf.get(pull.number) ?? { reviews: [], comments: [], state: 'none' };
  }
  async checks(sha: string) {
    this.call(`checks ${sha}`);
    return this.checksOf.get(sha) ?? [];
  }
}

/** A tracker writer that keeps comments and states, and logs every write. */
export class FakeTrackerWriter implements TrackerWriter {
  readonly writes: string[] = [];
  readonly comments: TrackerComment[] = [];
  state = 'In Review';
  fail = false;

  async readIssue(): Promise<Issue | null> {
    return null;
  }
  async listComments() {
    if (this.fail) throw new LorenzError('tracker_status', 'tracker down');
    return [...this.comments];
  }
  async comment(issueId: string, body: string) {
    if (this.fail) throw new LorenzError('tracker_status', 'tracker down');
    this.writes.push(`comment ${issueId}: ${body}`);
    const comment = {
      id: String(this.comments.length + 1),
      body,
      author: 'bot',
      created_at: null,
      updated_at: null,
    };
    this.comments.push(comment);
    return comment;
  }
  async updateComment(): Promise<TrackerComment> {
    throw new Error('not used');
  }
  async updateState(issueId: string, state: string): Promise<Issue> {
    if (this.fail) throw new LorenzError('tracker_status', 'tracker down');
    this.writes.push(`state ${issueId}: ${state}`);
    this.state = state;
    return normalizeIssue({ id: issueId, identifier: 'ENG-1', title: 't', state });
  }
}
