import { describe, expect, it } from 'vitest';
import { createGitlabCodeHost } from '../../../src/codehost/gitlab.js';
import { GITLAB_MAX_PAGES } from '../../../src/codehost/gitlab-pages.js';
import type { CodeHostOptions } from '../../../src/codehost/types.js';
import { LorenzError } from '../../../src/workflow/errors.js';
import { NOW, gitlabHarnessPerTest } from '../../support/fakes/gitlab-host.js';
import type { GitlabPagination, GitlabStandIn } from '../../support/fakes/gitlab-server.js';
import { failureOf } from '../../support/lorenz-errors.js';

const start = gitlabHarnessPerTest();

describe('the GitLab code host: errors', () => {
  it.each([401, 403, 404, 500, 502])(
    'reports HTTP %i as codehost_status with the path',
    async (status) => {
      const { host, standIn } = await start();
      standIn.faults.push({ kind: 'status', status, message: `${status} nope` });
      const error = await failureOf(host.defaultBranch());
      expect(error.code).toBe('codehost_status');
      expect(error.message).toBe(
        `GitLab answered HTTP ${status} for /api/v4/projects/acme%2Fapp: ${status} nope`,
      );
      expect(error.detail).toMatchObject({
        status,
        path: '/api/v4/projects/acme%2Fapp',
        codehost: 'gitlab',
      });
    },
  );

  it('reports a wrong token as codehost_status 401, never quoting the token', async () => {
    const { standIn } = await start();
    const host = createGitlabCodeHost({
      kind: 'gitlab',
      apiUrl: standIn.apiUrl,
      repository: standIn.project,
      token: 'glpat-wrong-secret',
    });
    const error = await failureOf(host.identity());
    expect(error).toMatchObject({ code: 'codehost_status', detail: { status: 401 } });
    expect(JSON.stringify([error.message, error.detail])).not.toContain('glpat-wrong-secret');
  });

  it('scrubs the token from a message that echoes it back', async () => {
    const { host, standIn } = await start();
    standIn.faults.push({ kind: 'echo-token' });
    const error = await failureOf(host.identity());
    expect(error.code).toBe('codehost_status');
    expect(error.message).toContain('[redacted]');
    expect(error.message).not.toContain(standIn.token);
  });

  it('sends the token in PRIVATE-TOKEN and nowhere else', async () => {
    const { host, standIn } = await start();
    await host.identity();
    const [request] = standIn.requests;
    expect(request?.privateToken).toBe(standIn.token);
    expect(request?.authorization).toBeUndefined();
    expect(request?.query.toString()).not.toContain(standIn.token);
  });

  it('reports a 429 as codehost_rate_limited with the time Retry-After gives', async () => {
    const { host, standIn } = await start();
    standIn.faults.push({ kind: 'rate-limit', retryAfterSeconds: 30 });
    const error = await failureOf(host.identity());
    expect(error.code).toBe('codehost_rate_limited');
    expect(error.detail).toMatchObject({
      retryAfterMs: 30_000,
      retryAt: new Date(NOW + 30_000).toISOString(),
    });
  });

  it('reads RateLimit-Reset when a 429 has no Retry-After', async () => {
    const { host, standIn } = await start();
    const reset = Math.floor(NOW / 1000) + 90;
    standIn.faults.push({ kind: 'rate-limit', resetEpochSeconds: reset });
    const error = await failureOf(host.identity());
    expect(error).toMatchObject({
      code: 'codehost_rate_limited',
      detail: { retryAfterMs: 90_000 },
    });
  });

  it('reports a cut connection as codehost_request', async () => {
    const { host, standIn } = await start();
    standIn.faults.push({ kind: 'reset' });
    expect((await failureOf(host.identity())).code).toBe('codehost_request');
  });

  it('reports no answer within the timeout as codehost_request', async () => {
    const { host, standIn } = await start({}, { timeoutMs: 200 });
    standIn.faults.push({ kind: 'hang' });
    const error = await failureOf(host.identity());
    expect(error).toMatchObject({ code: 'codehost_request', detail: { timeoutMs: 200 } });
  });

  it("ends a request when the caller's signal aborts", async () => {
    const { host, standIn } = await start();
    standIn.faults.push({ kind: 'hang' });
    const controller = new AbortController();
    const pending = failureOf(host.identity({ signal: controller.signal }));
    setTimeout(() => controller.abort(), 50);
    const error = await pending;
    expect(error.code).toBe('codehost_request');
    expect(error.message).toMatch(/aborted/);
  });

  it('reports an unreachable host as codehost_request', async () => {
    const host = createGitlabCodeHost({
      kind: 'gitlab',
      apiUrl: 'http://127.0.0.1:9/api/v4',
      repository: 'acme/app',
      token: 'glpat-x',
    });
    const error = await failureOf(host.identity());
    expect(error.code).toBe('codehost_request');
    expect(error.message).not.toContain('glpat-x');
  });

  it.each([
    ['a body that is not JSON', { kind: 'malformed' } as const],
    ['a user without a username', { kind: 'wrong-shape', body: { id: 1 } } as const],
    ['a list where a user belongs', { kind: 'wrong-shape', body: [] } as const],
  ])('reports %s as codehost_response', async (_, fault) => {
    const { host, standIn } = await start();
    standIn.faults.push(fault);
    expect((await failureOf(host.identity())).code).toBe('codehost_response');
  });

  it('reports a discussions answer that is no list as codehost_response', async () => {
    const { host, standIn } = await start();
    const mr = standIn.state.addMergeRequest({ sourceBranch: 'feature', sourceProjectId: 42 });
    const pull = await host.getPullRequest(mr.iid);
    standIn.faults.push({ kind: 'wrong-shape', body: { notes: [] }, path: '/discussions' });
    expect((await failureOf(host.feedback(pull))).code).toBe('codehost_response');
  });

  it.each(['/approvals', '/reviewers'])(
    'reports a %s answer of the wrong shape as codehost_response',
    async (path) => {
      const { host, standIn } = await start();
      const mr = standIn.state.addMergeRequest({ sourceBranch: 'feature', sourceProjectId: 42 });
      const pull = await host.getPullRequest(mr.iid);
      standIn.faults.push({ kind: 'wrong-shape', body: { notes: [] }, path });
      expect((await failureOf(host.feedback(pull))).code).toBe('codehost_response');
    },
  );

  it('drops a discussion note of an unknown shape with a warning, keeping the rest', async () => {
    const { host, standIn, warnings } = await start();
    const mr = standIn.state.addMergeRequest({ sourceBranch: 'feature', sourceProjectId: 42 });
    const pull = await host.getPullRequest(mr.iid);
    standIn.state.addDiscussionNote(mr.iid, { body: 'kept', author: 'alice' });
    const broken = standIn.state.addDiscussionNote(mr.iid, { body: 'dropped', author: 'bob' });
    (broken as { id: unknown }).id = 'not-a-number';
    const feedback = await host.feedback(pull);
    expect(feedback.comments.map((comment) => comment.body)).toEqual(['kept']);
    expect(warnings).toEqual([expect.stringContaining('note')]);
    // The stand-in rightly flagged the note it was made to send; that was the point.
    expect(standIn.violations).toEqual([expect.stringContaining('/discussions 200')]);
    standIn.violations.length = 0;
  });
});

/**
 * A stand-in that pages as told, with a merge request from `feature` holding `notes` discussion
 * notes (`note 0`, `note 1`...): returns that merge request's number.
 */
function pagedNotes(
  standIn: GitlabStandIn,
  paging: { pagination: GitlabPagination; maxPerPage?: number },
  notes: number,
): number {
  Object.assign(standIn, paging);
  const mr = standIn.state.addMergeRequest({ sourceBranch: 'feature', sourceProjectId: 42 });
  for (let index = 0; index < notes; index += 1) {
    standIn.state.addDiscussionNote(mr.iid, { body: `note ${index}`, author: 'alice' });
  }
  return mr.iid;
}

describe('the GitLab code host: pagination and conditional requests', () => {
  it.each(['normal', 'next-page-only'] as const)('reads every page (%s)', async (pagination) => {
    const { host, standIn } = await start();
    const iid = pagedNotes(standIn, { pagination, maxPerPage: 2 }, 5);
    const feedback = await host.feedback(await host.getPullRequest(iid));
    expect(feedback.comments.map((comment) => comment.body)).toEqual(
      [0, 1, 2, 3, 4].map((n) => `note ${n}`),
    );
    const pages = standIn.requests.filter((request) => request.rawPath.endsWith('/discussions'));
    expect(pages.map((request) => request.query.get('page') ?? '1')).toEqual(['1', '2', '3']);
  });

  it('stops at the page bound with a warning and keeps what it read', async () => {
    const { host, standIn, warnings } = await start();
    const iid = pagedNotes(standIn, { pagination: 'endless', maxPerPage: 1 }, 12);
    const feedback = await host.feedback(await host.getPullRequest(iid));
    expect(feedback.comments).toHaveLength(GITLAB_MAX_PAGES);
    expect(warnings).toEqual([expect.stringMatching(/more than 10 pages of .*\/discussions/)]);
    const pages = standIn.requests.filter((request) => request.rawPath.endsWith('/discussions'));
    expect(pages).toHaveLength(GITLAB_MAX_PAGES);
  });

  it('never follows a next page on another origin (the token would go with it)', async () => {
    const { host, standIn, warnings } = await start();
    standIn.pagination = 'foreign-next';
    const mr = standIn.state.addMergeRequest({ sourceBranch: 'feature', sourceProjectId: 42 });
    standIn.state.addDiscussionNote(mr.iid, { body: 'only', author: 'alice' });
    const feedback = await host.feedback(await host.getPullRequest(mr.iid));
    expect(feedback.comments.map((comment) => comment.body)).toEqual(['only']);
    expect(warnings).toEqual([
      expect.stringMatching(/next page of .*\/discussions is not one to follow/),
    ]);
  });

  it('follows pages after 304s too', async () => {
    const { host, standIn, again } = await start();
    const iid = pagedNotes(standIn, { pagination: 'next-page-only', maxPerPage: 2 }, 3);
    const pull = await host.getPullRequest(iid);
    await host.feedback(pull);
    const before = standIn.notModified;
    const second = await again().feedback(pull);
    expect(second.comments).toHaveLength(3);
    // approvals, reviewers and both discussion pages.
    expect(standIn.notModified - before).toBe(4);
  });

  it('asks If-None-Match with the ETag GitLab gave', async () => {
    const { host, standIn } = await start();
    await host.defaultBranch();
    await host.defaultBranch();
    const [first, second] = standIn.requests;
    expect(first?.ifNoneMatch).toBeUndefined();
    expect(second?.ifNoneMatch).toMatch(/^W\/"/);
    expect(second?.status).toBe(304);
    expect(standIn.notModified).toBe(1);
  });
});

describe('the GitLab code host: settings', () => {
  const base: CodeHostOptions = {
    kind: 'gitlab',
    apiUrl: 'https://gitlab.example/api/v4',
    repository: 'acme/app',
    token: 'glpat-x',
  };

  it.each([
    ['an API root that is no URL', { apiUrl: 'gitlab.example' }],
    ['an API root that is not http(s)', { apiUrl: 'ftp://gitlab.example/api/v4' }],
    ['an API root with credentials', { apiUrl: 'https://u:p@gitlab.example/api/v4' }],
    ['an empty token', { token: ' ' }],
    ['a project without a group', { repository: 'app' }],
    ['a project with an empty part', { repository: 'acme//app' }],
    ['another kind', { kind: 'github' as const }],
  ])('refuses %s as invalid_codehost_config', (_, change) => {
    let thrown: unknown;
    try {
      createGitlabCodeHost({ ...base, ...change });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(LorenzError);
    expect((thrown as LorenzError).code).toBe('invalid_codehost_config');
    expect((thrown as LorenzError).message).not.toContain('glpat-x');
  });

  it('takes a project path with slashes around it', () => {
    expect(createGitlabCodeHost({ ...base, repository: '/acme/sub/app/' }).repository).toBe(
      'acme/sub/app',
    );
  });
});
