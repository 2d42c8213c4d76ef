/**
 * What a review round's prompt sees besides the issue (docs/review-prompts.md): the pull
 * request, the feedback that started the round and the checks that failed on its head. Keys
 * are snake_case, as every template variable. Reviewer text is data: it is rendered as a
 * value, never parsed as a template.
 */
export interface ReviewPromptContext {
  review: {
    /** The round this attempt is (1-based). */
    round: number;
    max_rounds: number;
    /** `approved`, `changes_requested`, `commented` or `none`. */
    state: string;
    pull_request: { number: number; url: string; head_sha: string; branch: string; base: string };
    /** The comments new since the last round, oldest first. */
    comments: ReviewPromptComment[];
  };
  checks: {
    failed: ReviewPromptCheck[];
  };
}

export interface ReviewPromptComment {
  path: string | null;
  line: number | null;
  author: string | null;
  body: string;
}

export interface ReviewPromptCheck {
  name: string;
  conclusion: string | null;
  /** The tail of its output, where the host gives it. */
  output: string | null;
  url: string | null;
}

/** What the PR title and body templates see besides the issue. */
export interface PullRequestTextContext {
  branch: string;
  base: string;
  /** The run's summary line, where its last attempt left one; null otherwise. */
  summary: string | null;
}
