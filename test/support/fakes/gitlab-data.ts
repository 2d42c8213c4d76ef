// The in-memory state of the GitLab stand-in (gitlab-server.ts) and the JSON GitLab's REST v4
// answers carry for it. Field names and nullability follow GitLab's API docs; each builder
// names its doc page, and test/fixtures/gitlab/documented-shapes.json holds the shapes the
// stand-in's answers are checked against.

export type FakeMergeRequestState = 'opened' | 'closed' | 'merged' | 'locked';

export interface FakeMergeRequest {
  iid: number;
  title: string;
  description: string;
  state: FakeMergeRequestState;
  sourceBranch: string;
  targetBranch: string;
  sha: string | null;
  /** The project the branch lives in; another id stands for a fork. */
  sourceProjectId: number;
  createdAt: string;
  updatedAt: string;
}

export interface FakePosition {
  new_path: string | null;
  old_path: string | null;
  new_line: number | null;
  old_line: number | null;
}

export interface FakeNote {
  id: number;
  body: string;
  author: string;
  system: boolean;
  /** null for a plain comment, DiscussionNote for a thread reply, DiffNote on a diff line. */
  type: null | 'DiscussionNote' | 'DiffNote';
  position: FakePosition | null;
  createdAt: string;
}

export interface FakeDiscussion {
  id: string;
  notes: FakeNote[];
}

export interface FakeJob {
  id: number;
  name: string;
  status: string;
  stage?: string;
  allowFailure?: boolean;
  failureReason?: string | null;
  /** The raw trace (ANSI codes and section markers as GitLab keeps them); none: 404. */
  trace?: string;
}

export interface FakePipeline {
  id: number;
  sha: string;
  ref: string;
  status: string;
  jobs: FakeJob[];
}

export interface FakeCommitStatus {
  id: number;
  name: string;
  status: string;
  description: string | null;
  targetUrl: string | null;
}

export interface FakeUser {
  id: number;
  username: string;
}

const TIME = '2026-11-30T10:00:00.000Z';

export function userJson(user: FakeUser, webBase: string): Record<string, unknown> {
  return {
    id: user.id,
    username: user.username,
    name: user.username,
    state: 'active',
    locked: false,
    avatar_url: null,
    web_url: `${webBase}/${user.username}`,
  };
}

/** doc/api/projects.md, "Get a single project" (the fields the code host reads and a few more). */
export function projectJson(
  id: number,
  path: string,
  defaultBranch: string | null,
  webBase: string,
): Record<string, unknown> {
  const name = path.split('/').at(-1) ?? path;
  return {
    id,
    name,
    path: name,
    path_with_namespace: path,
    name_with_namespace: path.split('/').join(' / '),
    default_branch: defaultBranch,
    visibility: 'private',
    web_url: `${webBase}/${path}`,
    http_url_to_repo: `${webBase}/${path}.git`,
    created_at: TIME,
    last_activity_at: TIME,
  };
}

export function commitJson(sha: string, title: string): Record<string, unknown> {
  return {
    id: sha,
    short_id: sha.slice(0, 8),
    title,
    message: title,
    author_name: 'Lorenz',
    author_email: 'lorenz@example.test',
    authored_date: TIME,
    committer_name: 'Lorenz',
    committer_email: 'lorenz@example.test',
    committed_date: TIME,
    created_at: TIME,
    parent_ids: [],
    web_url: `https://gitlab.example/-/commit/${sha}`,
  };
}

/** doc/api/branches.md, "Get single repository branch". */
export function branchJson(name: string, sha: string, isDefault: boolean): Record<string, unknown> {
  return {
    name,
    merged: false,
    protected: isDefault,
    default: isDefault,
    developers_can_push: false,
    developers_can_merge: false,
    can_push: true,
    web_url: `https://gitlab.example/-/tree/${encodeURIComponent(name)}`,
    commit: commitJson(sha, `head of ${name}`),
  };
}

/** doc/api/merge_requests.md, "Get single MR". */
export function mergeRequestJson(
  mr: FakeMergeRequest,
  projectId: number,
  path: string,
  author: FakeUser,
  webBase: string,
): Record<string, unknown> {
  const draft = /^\s*(\[draft\]|\(draft\)|draft:)/i.test(mr.title);
  return {
    id: 1000 + mr.iid,
    iid: mr.iid,
    project_id: projectId,
    title: mr.title,
    description: mr.description,
    state: mr.state,
    created_at: mr.createdAt,
    updated_at: mr.updatedAt,
    merged_at: mr.state === 'merged' ? mr.updatedAt : null,
    closed_at: mr.state === 'closed' ? mr.updatedAt : null,
    target_branch: mr.targetBranch,
    source_branch: mr.sourceBranch,
    source_project_id: mr.sourceProjectId,
    target_project_id: projectId,
    author: userJson(author, webBase),
    draft,
    work_in_progress: draft,
    merge_status: 'can_be_merged',
    detailed_merge_status: 'mergeable',
    sha: mr.sha,
    merge_commit_sha: null,
    squash_commit_sha: null,
    references: { short: `!${mr.iid}`, relative: `!${mr.iid}`, full: `${path}!${mr.iid}` },
    web_url: `${webBase}/${path}/-/merge_requests/${mr.iid}`,
  };
}

/** doc/api/discussions.md, "List project merge request discussion items". */
export function noteJson(
  note: FakeNote,
  noteableIid: number,
  webBase: string,
): Record<string, unknown> {
  const position =
    note.type === 'DiffNote' && note.position !== null
      ? {
          base_sha: 'b'.repeat(40),
          start_sha: 's'.repeat(40),
          head_sha: 'h'.repeat(40),
          position_type: 'text',
          ...note.position,
        }
      : undefined;
  return {
    id: note.id,
    type: note.type,
    body: note.body,
    attachment: null,
    author: userJson({ id: 500 + note.author.length, username: note.author }, webBase),
    created_at: note.createdAt,
    updated_at: note.createdAt,
    system: note.system,
    noteable_id: 1000 + noteableIid,
    noteable_type: 'MergeRequest',
    noteable_iid: noteableIid,
    resolvable: note.type === 'DiffNote',
    ...(position === undefined ? {} : { position }),
  };
}

/** doc/api/pipelines.md, "List project pipelines" (the basic pipeline). */
export function pipelineJson(
  pipeline: FakePipeline,
  projectId: number,
  webBase: string,
  path: string,
) {
  return {
    id: pipeline.id,
    iid: pipeline.id,
    project_id: projectId,
    sha: pipeline.sha,
    ref: pipeline.ref,
    status: pipeline.status,
    source: 'push',
    created_at: TIME,
    updated_at: TIME,
    web_url: `${webBase}/${path}/-/pipelines/${pipeline.id}`,
  };
}

/** doc/api/jobs.md, "List pipeline jobs". */
export function jobJson(
  job: FakeJob,
  pipeline: FakePipeline,
  projectId: number,
  webBase: string,
  path: string,
) {
  return {
    id: job.id,
    name: job.name,
    stage: job.stage ?? 'test',
    status: job.status,
    ref: pipeline.ref,
    tag: false,
    allow_failure: job.allowFailure ?? false,
    failure_reason: job.status === 'failed' ? (job.failureReason ?? 'script_failure') : undefined,
    created_at: TIME,
    started_at: TIME,
    finished_at: TIME,
    duration: 1.5,
    user: null,
    commit: commitJson(pipeline.sha, 'pipeline commit'),
    pipeline: pipelineJson(pipeline, projectId, webBase, path),
    web_url: `${webBase}/${path}/-/jobs/${job.id}`,
  };
}

/** doc/api/commits.md, "List the statuses of a commit". */
export function commitStatusJson(status: FakeCommitStatus, sha: string): Record<string, unknown> {
  return {
    id: status.id,
    sha,
    ref: null,
    status: status.status,
    name: status.name,
    target_url: status.targetUrl,
    description: status.description,
    created_at: TIME,
    started_at: null,
    finished_at: null,
    allow_failure: false,
    coverage: null,
    author: { id: 1, username: 'ci-bot', name: 'ci-bot', state: 'active' },
  };
}
