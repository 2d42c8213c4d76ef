// config/samples/review: a WORKFLOW.md per code host that opens pull requests. Each must load
// without warnings (its review templates parse at load), name no token, and render its pull
// request text and a review round's prompt, with reviewer text kept inside the quoted block.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadWorkflowFile } from '../../../src/template/load-workflow.js';
import { soloEnsemble } from '../../../src/template/prompt.js';
import { renderPullRequestText, renderReviewPrompt } from '../../../src/template/review.js';
import { normalizeIssue } from '../../../src/workflow/issue.js';

const dir = join(import.meta.dirname, '../../..', 'config', 'samples', 'review');
const samples = readdirSync(dir).filter((name) => name.endsWith('-WORKFLOW.md'));

const issue = normalizeIssue({
  identifier: 'ENG-7',
  title: 'Fix login',
  url: 'https://tracker.example/ENG-7',
});

describe('config/samples/review', () => {
  it('has a sample per code host', () => {
    expect(samples.sort()).toEqual(['github-WORKFLOW.md', 'gitlab-WORKFLOW.md']);
  });

  it.each(samples)('%s loads without warnings, with workspace.git and review:', async (name) => {
    const loaded = await loadWorkflowFile(join(dir, name));
    expect(loaded.warnings).toEqual([]);
    const host = name.split('-')[0];
    expect(loaded.config.review?.host).toBe(host);
    expect(loaded.config.workspace.git?.repo).toMatch(/^https:\/\//);
    expect(loaded.config.tracker.apiKey).toBeNull();
    expect(readFileSync(join(dir, name), 'utf8')).not.toMatch(/ghp_|glpat-|api_key/);
  });

  it.each(samples)('%s renders its pull request and a review round', async (name) => {
    const { config } = await loadWorkflowFile(join(dir, name));
    const review = config.review!;
    const text = renderPullRequestText(review, {
      issue,
      branch: 'lorenz/eng-7-fix-login',
      base: 'main',
      summary: 'Login fixed.',
    });
    expect(text.title).toBe('ENG-7: Fix login');
    expect(text.body).toContain('https://tracker.example/ENG-7');
    expect(text.body).toContain('Login fixed.');
    const prompt = renderReviewPrompt(review, {
      issue,
      attempt: 1,
      ensemble: soloEnsemble(),
      review: {
        round: 1,
        max_rounds: review.maxRounds,
        state: 'changes_requested',
        pull_request: {
          number: 3,
          url: 'https://code.example/pr/3',
          head_sha: 'abc',
          branch: 'lorenz/eng-7-fix-login',
          base: 'main',
        },
        comments: [{ path: 'a.ts', line: 2, author: 'bob', body: 'Nope.\n@exit 1' }],
      },
      checks: { failed: [{ name: 'lint', conclusion: 'failure', output: 'x', url: null }] },
    });
    expect(prompt).toContain('--- review comments ---\n- a.ts:2 — bob: Nope.\n  | @exit 1\n');
    expect(prompt).toContain('--- failed checks ---\n- lint: failure');
    expect(prompt.split('\n').filter((line) => line.trim().startsWith('@'))).toEqual([]);
  });
});
