// The GitLab REST v4 endpoints the code host uses, answered from GitlabState. Each route
// names the documented operation (test/fixtures/gitlab/documented-shapes.json) whose shape
// its answer must have.
import {
  branchJson,
  commitJson,
  commitStatusJson,
  jobJson,
  mergeRequestJson,
  noteJson,
  pipelineJson,
  projectJson,
  userJson,
  type FakeMergeRequest,
  type FakeUser,
} from './gitlab-data.js';
import type { BranchHeads, GitlabState } from './gitlab-state.js';

export interface Answer {
  status: number;
  /** JSON, or a string for text/plain (a trace). */
  body: unknown;
  /** A list to paginate: the route gives all items, the server cuts pages. */
  list?: boolean;
  text?: boolean;
}

export interface RouteContext {
  state: GitlabState;
  project: string;
  projectId: number;
  user: FakeUser;
  /** The web root (no /api/v4), for web_url fields. */
  webBase: string;
  defaultBranch: () => string | null;
  branchHead: BranchHeads;
  /** false: GET .../reviewers answers 404, as on GitLab before 15.3. */
  reviewersEndpoint: () => boolean;
}

export interface Request {
  method: string;
  /** Path segments after the API root, percent-decoded one by one. */
  segments: string[];
  query: URLSearchParams;
  body: unknown;
}

export type Handler = (
  context: RouteContext,
  params: Record<string, string>,
  request: Request,
) => Promise<Answer>;

export interface Route {
  method: string;
  /** As GitLab's docs write it: `/projects/:id/merge_requests/:merge_request_iid`. */
  template: string;
  handler: Handler;
}

const notFound = (what = '404 Not found'): Answer => ({ status: 404, body: { message: what } });

const isMap = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function mrOf(context: RouteContext, params: Record<string, string>) {
  return context.state.mergeRequests.find((mr) => String(mr.iid) === params.merge_request_iid);
}

const mrJson = (context: RouteContext, mr: Parameters<typeof mergeRequestJson>[0]) =>
  mergeRequestJson(mr, context.projectId, context.project, context.user, context.webBase);

/** An open merge request's head follows pushes to its source branch, as on GitLab. */
async function followHead(context: RouteContext, mr: FakeMergeRequest): Promise<FakeMergeRequest> {
  if (mr.state !== 'opened') return mr;
  const head = await context.branchHead(context.project, mr.sourceBranch, mr.targetBranch);
  if (head !== null) mr.sha = head.sha;
  return mr;
}

async function compare(
  context: RouteContext,
  _: Record<string, string>,
  request: Request,
): Promise<Answer> {
  const from = request.query.get('from');
  const to = request.query.get('to');
  if (from === null || to === null)
    return { status: 400, body: { error: 'from is missing, to is missing' } };
  const head = await context.branchHead(context.project, to, from);
  if (head === null) return notFound('404 Ref Not Found');
  const commits = Array.from({ length: head.aheadBy }, (_, index) =>
    commitJson(
      index === head.aheadBy - 1
        ? head.sha
        : `${String(index).padStart(2, '0')}${head.sha.slice(2)}`,
      `commit ${index + 1}`,
    ),
  );
  return {
    status: 200,
    body: {
      commit: commits.at(-1) ?? null,
      commits,
      diffs: [],
      compare_timeout: false,
      compare_same_ref: from === to,
      web_url: `${context.webBase}/${context.project}/-/compare/${from}...${to}`,
    },
  };
}

async function createMergeRequest(
  context: RouteContext,
  _: Record<string, string>,
  request: Request,
): Promise<Answer> {
  const body = isMap(request.body) ? request.body : {};
  const { source_branch: source, target_branch: target, title } = body;
  if (typeof source !== 'string' || typeof target !== 'string' || typeof title !== 'string') {
    return {
      status: 400,
      body: { error: 'source_branch is missing, target_branch is missing, title is missing' },
    };
  }
  if (context.state.openMergeRequest(source) !== undefined) {
    return {
      status: 409,
      body: { message: ['Another open merge request already exists for this source branch: !1'] },
    };
  }
  const head = await context.branchHead(context.project, source, target);
  const mr = context.state.addMergeRequest({
    sourceBranch: source,
    targetBranch: target,
    title,
    description: typeof body.description === 'string' ? body.description : '',
    sha: head?.sha ?? null,
    sourceProjectId: context.projectId,
  });
  return { status: 201, body: mrJson(context, mr) };
}

function updateMergeRequest(
  context: RouteContext,
  params: Record<string, string>,
  request: Request,
): Answer {
  const mr = mrOf(context, params);
  if (mr === undefined) return notFound();
  const body = isMap(request.body) ? request.body : {};
  if (typeof body.title === 'string') mr.title = body.title;
  if (typeof body.description === 'string') mr.description = body.description;
  if (body.state_event === 'close') mr.state = 'closed';
  mr.updatedAt = context.state.tick();
  return { status: 200, body: mrJson(context, mr) };
}

function jobsOfCommit(context: RouteContext, sha: string) {
  return context.state.pipelines.filter((pipeline) => pipeline.sha === sha);
}

export const ROUTES: Route[] = [
  {
    method: 'GET',
    template: '/user',
    handler: async (context) => ({ status: 200, body: userJson(context.user, context.webBase) }),
  },
  {
    method: 'GET',
    template: '/projects/:id',
    handler: async (context) => ({
      status: 200,
      body: projectJson(
        context.projectId,
        context.project,
        context.defaultBranch(),
        context.webBase,
      ),
    }),
  },
  {
    method: 'GET',
    template: '/projects/:id/repository/branches/:branch',
    handler: async (context, params) => {
      const head = await context.branchHead(context.project, params.branch ?? '', null);
      if (head === null) return notFound('404 Branch Not Found');
      const name = params.branch ?? '';
      return { status: 200, body: branchJson(name, head.sha, name === context.defaultBranch()) };
    },
  },
  { method: 'GET', template: '/projects/:id/repository/compare', handler: compare },
  {
    method: 'GET',
    template: '/projects/:id/merge_requests',
    handler: async (context, _, request) => {
      const source = request.query.get('source_branch');
      const state = request.query.get('state') ?? 'all';
      const found = context.state.mergeRequests
        .filter((mr) => source === null || mr.sourceBranch === source)
        .filter((mr) => state === 'all' || mr.state === state)
        .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
      const items: unknown[] = [];
      for (const mr of found) items.push(mrJson(context, await followHead(context, mr)));
      return { status: 200, body: items, list: true };
    },
  },
  { method: 'POST', template: '/projects/:id/merge_requests', handler: createMergeRequest },
  {
    method: 'GET',
    template: '/projects/:id/merge_requests/:merge_request_iid',
    handler: async (context, params) => {
      const mr = mrOf(context, params);
      if (mr === undefined) return notFound();
      return { status: 200, body: mrJson(context, await followHead(context, mr)) };
    },
  },
  {
    method: 'PUT',
    template: '/projects/:id/merge_requests/:merge_request_iid',
    handler: async (context, params, request) => updateMergeRequest(context, params, request),
  },
  {
    method: 'GET',
    template: '/projects/:id/merge_requests/:merge_request_iid/approvals',
    handler: async (context, params) => {
      const mr = mrOf(context, params);
      if (mr === undefined) return notFound();
      const names = context.state.approvals.get(mr.iid) ?? [];
      return {
        status: 200,
        body: {
          id: 1000 + mr.iid,
          iid: mr.iid,
          project_id: context.projectId,
          title: mr.title,
          state: mr.state,
          merge_status: 'can_be_merged',
          approved: names.length > 0,
          approvals_required: 0,
          approvals_left: 0,
          approved_by: names.map((username, index) => ({
            user: userJson({ id: 700 + index, username }, context.webBase),
            approved_at: mr.updatedAt,
          })),
        },
      };
    },
  },
  {
    method: 'GET',
    template: '/projects/:id/merge_requests/:merge_request_iid/reviewers',
    handler: async (context, params) => {
      const mr = mrOf(context, params);
      if (mr === undefined || !context.reviewersEndpoint()) return notFound();
      const entries = [...(context.state.reviewers.get(mr.iid) ?? new Map<string, string>())];
      return {
        status: 200,
        body: entries.map(([username, state], index) => ({
          user: userJson({ id: 800 + index, username }, context.webBase),
          state,
          created_at: mr.createdAt,
        })),
      };
    },
  },
  {
    method: 'GET',
    template: '/projects/:id/merge_requests/:merge_request_iid/discussions',
    handler: async (context, params) => {
      const mr = mrOf(context, params);
      if (mr === undefined) return notFound();
      const items = (context.state.discussions.get(mr.iid) ?? []).map((discussion) => ({
        id: discussion.id,
        individual_note: discussion.notes.length === 1 && discussion.notes[0]?.type === null,
        notes: discussion.notes.map((note) => noteJson(note, mr.iid, context.webBase)),
      }));
      return { status: 200, body: items, list: true };
    },
  },
  {
    method: 'GET',
    template: '/projects/:id/pipelines',
    handler: async (context, _, request) => {
      const sha = request.query.get('sha');
      const items = context.state.pipelines
        .filter((pipeline) => sha === null || pipeline.sha === sha)
        .sort((a, b) => b.id - a.id)
        .map((pipeline) =>
          pipelineJson(pipeline, context.projectId, context.webBase, context.project),
        );
      return { status: 200, body: items, list: true };
    },
  },
  {
    method: 'GET',
    template: '/projects/:id/pipelines/:pipeline_id/jobs',
    handler: async (context, params) => {
      const pipeline = context.state.pipelines.find(
        (item) => String(item.id) === params.pipeline_id,
      );
      if (pipeline === undefined) return notFound();
      const items = [...pipeline.jobs]
        .sort((a, b) => b.id - a.id)
        .map((job) => jobJson(job, pipeline, context.projectId, context.webBase, context.project));
      return { status: 200, body: items, list: true };
    },
  },
  {
    method: 'GET',
    template: '/projects/:id/jobs/:job_id/trace',
    handler: async (context, params) => {
      const job = context.state.pipelines
        .flatMap((pipeline) => pipeline.jobs)
        .find((item) => String(item.id) === params.job_id);
      if (job?.trace === undefined) return notFound();
      return { status: 200, body: job.trace, text: true };
    },
  },
  {
    method: 'GET',
    template: '/projects/:id/repository/commits/:sha/statuses',
    handler: async (context, params) => {
      const sha = params.sha ?? '';
      const fromJobs = jobsOfCommit(context, sha).flatMap((pipeline) =>
        pipeline.jobs.map((job) => ({
          id: job.id,
          name: job.name,
          status: job.status,
          description: null,
          targetUrl: null,
        })),
      );
      const items = [...fromJobs, ...(context.state.statuses.get(sha) ?? [])]
        .sort((a, b) => b.id - a.id)
        .map((status) => commitStatusJson(status, sha));
      return { status: 200, body: items, list: true };
    },
  },
];

/** The route for a method and the segments after the API root; `:id` must be the project. */
export function matchRoute(
  context: RouteContext,
  method: string,
  segments: readonly string[],
): { route: Route; params: Record<string, string> } | 'no-project' | null {
  for (const route of ROUTES) {
    if (route.method !== method) continue;
    const parts = route.template.split('/').slice(1);
    if (parts.length !== segments.length) continue;
    const params: Record<string, string> = {};
    const fits = parts.every((part, index) => {
      const segment = segments[index] ?? '';
      if (part.startsWith(':')) {
        params[part.slice(1)] = segment;
        return true;
      }
      return part === segment;
    });
    if (!fits) continue;
    if (
      params.id !== undefined &&
      params.id !== context.project &&
      params.id !== String(context.projectId)
    ) {
      return 'no-project';
    }
    return { route, params };
  }
  return null;
}
