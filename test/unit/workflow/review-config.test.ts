import { describe, expect, it } from 'vitest';
import { configProblems, parseConfig } from '../../../src/workflow/config.js';
import { LorenzError } from '../../../src/workflow/errors.js';
import type { ReviewConfig } from '../../../src/workflow/review-config.js';
import {
  DEFAULT_CONTINUATION_PROMPT,
  DEFAULT_PR_BODY,
  DEFAULT_PR_TITLE,
} from '../../../src/workflow/review-defaults.js';

const GIT = { git: { repo: 'https://github.com/acme/web.git' } };

const withReview = (review: unknown, workspace: unknown = GIT) =>
  parseConfig({ workspace, review });

function failure(review: unknown, raw: Record<string, unknown> = { workspace: GIT }): LorenzError {
  try {
    parseConfig({ ...raw, review });
  } catch (error) {
    if (error instanceof LorenzError) return error;
    throw error;
  }
  throw new Error('expected parseConfig to fail');
}

const DEFAULTS: ReviewConfig = {
  host: null,
  apiUrl: null,
  prTitle: DEFAULT_PR_TITLE,
  prBody: DEFAULT_PR_BODY,
  draft: false,
  maxRounds: 3,
  onApproved: null,
  onMerged: null,
  requiredChecks: [],
  continuationPrompt: DEFAULT_CONTINUATION_PROMPT,
  pollIntervalMs: 60_000,
};

describe('the review: section', () => {
  it('is null when absent', () => {
    expect(parseConfig({ workspace: GIT }).config.review).toBeNull();
  });

  it.each([
    ['an empty section (`review:`)', null],
    ['an empty map', {}],
  ])('%s opts in with every default', (_name, review) => {
    const { config, warnings } = withReview(review);
    expect(config.review).toEqual(DEFAULTS);
    expect(warnings).toEqual([]);
  });

  it('the default pr_title is the issue identifier and title', () => {
    expect(DEFAULT_PR_TITLE).toBe('{{ issue.identifier }}: {{ issue.title }}');
  });

  it('normalizes every key to camelCase', () => {
    const { config, warnings } = withReview({
      host: 'gitlab',
      api_url: ' https://git.acme.dev/api/v4/ ',
      pr_title: '[{{ issue.identifier }}] {{ issue.title }}',
      pr_body: 'Fixes {{ issue.url }}',
      draft: true,
      max_rounds: '20',
      on_approved: 'Human Review',
      on_merged: 'Done',
      required_checks: ['build', 'test'],
      continuation_prompt: 'Fix: {{ review.state }}',
      poll_interval_ms: 5000,
    });
    expect(warnings).toEqual([]);
    expect(config.review).toEqual({
      host: 'gitlab',
      apiUrl: 'https://git.acme.dev/api/v4',
      prTitle: '[{{ issue.identifier }}] {{ issue.title }}',
      prBody: 'Fixes {{ issue.url }}',
      draft: true,
      maxRounds: 20,
      onApproved: 'Human Review',
      onMerged: 'Done',
      requiredChecks: ['build', 'test'],
      continuationPrompt: 'Fix: {{ review.state }}',
      pollIntervalMs: 5000,
    } satisfies ReviewConfig);
  });

  const TEMPLATE = 'must be a non-empty string (a Liquid template)';
  const ROUNDS = 'must be an integer from 1 to 20';
  const POLL_INTERVAL = 'must be an integer from 5000 to 2147483647';
  it.each([
    ['host', { host: 'bitbucket' }, 'review.host', 'must be one of "github", "gitlab"'],
    ['api_url', { api_url: 'git.acme.dev' }, 'review.api_url', 'must be an http(s) URL or null'],
    ['api_url type', { api_url: 3 }, 'review.api_url', 'must be an http(s) URL or null'],
    ['pr_title blank', { pr_title: '  ' }, 'review.pr_title', TEMPLATE],
    ['pr_body type', { pr_body: ['x'] }, 'review.pr_body', TEMPLATE],
    [
      'continuation_prompt blank',
      { continuation_prompt: '' },
      'review.continuation_prompt',
      TEMPLATE,
    ],
    ['draft', { draft: 'yes' }, 'review.draft', 'must be true or false'],
    ['max_rounds 0', { max_rounds: 0 }, 'review.max_rounds', ROUNDS],
    ['max_rounds 21', { max_rounds: 21 }, 'review.max_rounds', ROUNDS],
    ['max_rounds 1.5', { max_rounds: 1.5 }, 'review.max_rounds', ROUNDS],
    ['on_approved blank', { on_approved: ' ' }, 'review.on_approved', 'must be a non-empty string'],
    ['on_merged type', { on_merged: 7 }, 'review.on_merged', 'must be a non-empty string'],
    [
      'required_checks type',
      { required_checks: 'build' },
      'review.required_checks',
      'must be a list of strings',
    ],
    [
      'required_checks entry',
      { required_checks: ['build', ''] },
      'review.required_checks[1]',
      'must be a non-empty string',
    ],
    [
      'poll_interval_ms too short',
      { poll_interval_ms: 4999 },
      'review.poll_interval_ms',
      POLL_INTERVAL,
    ],
    [
      'poll_interval_ms beyond a timer',
      { poll_interval_ms: 2_147_483_648 },
      'review.poll_interval_ms',
      POLL_INTERVAL,
    ],
    ['the section itself', 'yes', 'review', 'must be a map'],
    ['the section as a list', [], 'review', 'must be a map'],
  ])('refuses a bad %s, naming its key path', (_name, review, path, rule) => {
    const error = failure(review);
    expect(error.code).toBe('invalid_workflow_config');
    expect(error.message).toBe(`${path}: ${rule}`);
    expect(configProblems(error)).toEqual([{ path, rule }]);
  });

  it('lists every bad key of the section at once', () => {
    const error = failure({ draft: 1, max_rounds: 99 });
    expect(configProblems(error).map((problem) => problem.path)).toEqual([
      'review.draft',
      'review.max_rounds',
    ]);
  });

  it.each([
    ['no workspace section', {}],
    ['a workspace without git', { workspace: { root: '/tmp/w' } }],
  ])('needs workspace.git (%s), naming review', (_name, raw) => {
    const error = failure({}, raw);
    expect(error.code).toBe('invalid_workflow_config');
    expect(error.message).toBe(
      'review: needs workspace.git: the pull request is opened for the issue branch of a git workspace',
    );
    expect(error.detail?.path).toBe('review');
  });

  it('accepts an empty `workspace.git:` (git with every default)', () => {
    expect(withReview({}, { git: null }).config.review).toEqual(DEFAULTS);
  });

  it('warns about unknown keys, as every section does, and still parses', () => {
    const { config, warnings } = withReview({ max_round: 5, draft: true });
    expect(warnings).toEqual(['unknown key review.max_round']);
    expect(config.review).toMatchObject({ maxRounds: 3, draft: true });
  });

  it('is a known top-level section (no unknown-key warning)', () => {
    expect(withReview({}).warnings).not.toContain('unknown key review');
  });
});
