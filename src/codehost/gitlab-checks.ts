import { z } from 'zod';
import type { CheckResult, CheckStatus } from './types.js';
import { listItems } from './gitlab-pages.js';
import {
  type GitlabCommitStatus,
  type GitlabJob,
  commitStatusSchema,
  jobSchema,
  parseAnswer,
  parseItems,
  pipelineSchema,
} from './gitlab-schemas.js';
import { type GitlabContext, projectUrl } from './gitlab-context.js';
import { gitlabGet } from './gitlab-transport.js';

/** How much of a failed job's trace is kept: its end, where the error is. */
export const TRACE_TAIL_CHARS = 2_000;
/** Traces read at most per call: each is a request, and a broken pipeline can fail wide. */
export const MAX_TRACES = 10;

/**
 * A job's or commit status's state in the contract's terms. `manual` is completed with the
 * conclusion `manual`: it waits for a person and will not run by itself, so nothing waits
 * for it. A failure GitLab allows (allow_failure) is `neutral`, as it does not fail the
 * pipeline; one that ran out of time is `timed_out`.
 */
export function checkState(
  status: string,
  allowFailure: boolean,
  failureReason: string | null,
): { status: CheckStatus; conclusion: string | null } {
  switch (status) {
    case 'success':
      return { status: 'completed', conclusion: 'success' };
    case 'failed':
      if (allowFailure) return { status: 'completed', conclusion: 'neutral' };
      if (failureReason === 'job_execution_timeout') {
        return { status: 'completed', conclusion: 'timed_out' };
      }
      return { status: 'completed', conclusion: 'failure' };
    case 'canceled':
      return { status: 'completed', conclusion: 'cancelled' };
    case 'skipped':
      return { status: 'completed', conclusion: 'skipped' };
    case 'manual':
      return { status: 'completed', conclusion: 'manual' };
    case 'running':
    case 'canceling':
      return { status: 'in_progress', conclusion: null };
    default:
      // created, pending, preparing, scheduled, waiting_for_resource, waiting_for_callback.
      return { status: 'queued', conclusion: null };
  }
}

// ANSI colour codes and GitLab's collapsible-section markers fill a raw trace.
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]|\u001b\][^\u0007]*\u0007/g;
const SECTION = /section_(?:start|end):\d+:[A-Za-z0-9_.-]+(?:\[[^\]]*\])?\r?/g;

/** The readable end of a trace: escapes and section markers gone, at most TRACE_TAIL_CHARS. */
export function traceTail(trace: string): string {
  const clean = trace.replace(ANSI, '').replace(SECTION, '').replace(/\r\n?/g, '\n');
  return clean.length > TRACE_TAIL_CHARS ? clean.slice(-TRACE_TAIL_CHARS) : clean;
}

async function jobTrace(
  context: GitlabContext,
  job: GitlabJob,
  signal: AbortSignal | undefined,
): Promise<string | null> {
  const url = projectUrl(context, `/jobs/${job.id}/trace`);
  // A job that never started has no trace: 404 says nothing is there.
  const answer = await gitlabGet(context.transport, url, { signal, allow: [404], as: 'text' });
  if (answer.status === 404 || typeof answer.body !== 'string') return null;
  return traceTail(answer.body);
}

function jobCheck(job: GitlabJob, outputTail: string | null): CheckResult {
  return {
    name: job.name,
    ...checkState(job.status, job.allow_failure === true, job.failure_reason ?? null),
    outputTail,
    url: job.web_url ?? null,
  };
}

function statusCheck(status: GitlabCommitStatus): CheckResult {
  return {
    name: status.name,
    ...checkState(status.status, status.allow_failure === true, null),
    outputTail: status.description ?? null,
    url: status.target_url ?? null,
  };
}

/** The jobs of the newest pipeline for the commit, failed ones with their trace's end. */
async function pipelineChecks(
  context: GitlabContext,
  sha: string,
  signal: AbortSignal | undefined,
): Promise<CheckResult[]> {
  const listUrl = projectUrl(context, '/pipelines', { sha, order_by: 'id', sort: 'desc' });
  const answer = await gitlabGet(context.transport, listUrl, { signal });
  const list = parseAnswer(context.transport, z.array(z.unknown()), answer.body, '/pipelines');
  const pipelines = parseItems(pipelineSchema, list, 'pipeline', context.onWarning);
  const newest = pipelines
    .filter((pipeline) => pipeline.sha === sha)
    .sort((a, b) => b.id - a.id)[0];
  if (newest === undefined) return [];
  const jobs = await listItems(
    context,
    projectUrl(context, `/pipelines/${newest.id}/jobs`),
    { schema: jobSchema, what: 'job' },
    signal,
  );
  // A retried job is listed once per try (newest first by id): the newest try counts.
  const latest = new Map<string, GitlabJob>();
  for (const job of [...jobs].sort((a, b) => b.id - a.id)) {
    if (!latest.has(job.name)) latest.set(job.name, job);
  }
  const results: CheckResult[] = [];
  let traces = 0;
  for (const job of [...latest.values()].sort((a, b) => a.id - b.id)) {
    const failed = job.status === 'failed' && job.allow_failure !== true;
    const read = failed && traces < MAX_TRACES;
    if (read) traces += 1;
    results.push(jobCheck(job, read ? await jobTrace(context, job, signal) : null));
  }
  return results;
}

/**
 * The checks on a commit: the jobs of its newest pipeline, then the commit statuses that
 * are not those jobs (GitLab lists every job as a commit status too; the statuses left are
 * from outside CI, posted through the API).
 */
export async function gitlabChecks(
  context: GitlabContext,
  sha: string,
  signal: AbortSignal | undefined,
): Promise<CheckResult[]> {
  const jobs = await pipelineChecks(context, sha, signal);
  const statusUrl = projectUrl(context, `/repository/commits/${encodeURIComponent(sha)}/statuses`);
  const statuses = await listItems(
    context,
    statusUrl,
    { schema: commitStatusSchema, what: 'commit status' },
    signal,
  );
  const named = new Set(jobs.map((job) => job.name));
  const newest = new Map<string, GitlabCommitStatus>();
  for (const status of [...statuses].sort((a, b) => b.id - a.id)) {
    if (!named.has(status.name) && !newest.has(status.name)) newest.set(status.name, status);
  }
  const others = [...newest.values()].sort((a, b) => a.id - b.id).map(statusCheck);
  return [...jobs, ...others];
}
