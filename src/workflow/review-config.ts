/**
 * The `review:` section of WORKFLOW.md, normalized (docs/review-loop.md): whether and how the
 * controller opens a pull request for an issue branch and brings the agent back on review
 * feedback. null in WorkflowConfig.review unless the front matter has the section. The YAML
 * spells the keys in snake_case (config-schema.ts); templates are Liquid over the issue, the
 * run and the pull request (src/template/review.ts).
 */
export interface ReviewConfig {
  /** `github` or `gitlab`; null: worked out from the clone address (github.com, gitlab.com, …). */
  host: 'github' | 'gitlab' | null;
  /** The host's API root; null: the public host's, or `<origin>/api/v3` / `<origin>/api/v4`. */
  apiUrl: string | null;
  /** Liquid: the pull request's title. */
  prTitle: string;
  /** Liquid: the pull request's body. */
  prBody: string;
  /** Open as a draft while the issue is in an active state; marked ready when it leaves them. */
  draft: boolean;
  /** Review rounds (continuation attempts on feedback) at most; then the loop stops. */
  maxRounds: number;
  /** State the issue moves to when the PR is approved with its required checks green; null: none. */
  onApproved: string | null;
  /** State the issue moves to when the PR is merged (unless it is already terminal); null: none. */
  onMerged: string | null;
  /** Check names that must succeed; empty: every check on the head commit counts. */
  requiredChecks: string[];
  /** Liquid: the prompt of a review round (sees `review` and `checks`). */
  continuationPrompt: string;
  /** How often an open PR is read back when no webhook wakes it. */
  pollIntervalMs: number;
}
