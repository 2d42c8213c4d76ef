import type { V1ConfigMap, V1OwnerReference } from '@kubernetes/client-node';
import type { WorkflowConfig } from '../../workflow/config.js';
import type { Issue } from '../../workflow/issue.js';
import { ensembleContext, renderPrompt } from '../../template/prompt.js';
import { renderHooks } from '../../runner/rendered-hooks.js';
import {
  INPUT_FILES,
  inputDigest,
  inputManifest,
  inputManifestText,
  promptInputFile,
  type InputManifest,
  type RunDescriptor,
} from '../../api/run-pod.js';
import {
  ANNOTATION_INPUTS_DIGEST,
  LABEL_COMPONENT,
  LABEL_ISSUERUN,
  LABEL_MANAGED_BY,
  MANAGED_BY,
} from '../shared/constants.js';
import { inputsConfigMapName, labelValue } from '../shared/object-names.js';
import { LorenzError } from '../../workflow/errors.js';
import type { ReviewPromptContext } from '../../template/review-context.js';
import { renderReviewPrompt } from '../../template/review.js';
import type { ReviewConfig } from '../../workflow/review-config.js';

export interface RunInputs {
  /** Every file the runner reads, manifest.json included. */
  files: Record<string, string>;
  manifest: InputManifest;
  /** sha256 of manifest.json: one value naming the whole input set. */
  digest: string;
}

/**
 * How long rendering may hold the controller. Templates render synchronously, so one render
 * blocks every other reconcile while it runs: each is held to `perTemplateMs`, the event
 * loop gets a turn between two of them, and a run's inputs (4 hooks and a prompt per slot,
 * up to 100) must be done within `totalMs`. Real templates render in well under 1 ms.
 */
export interface RenderBudget {
  perTemplateMs: number;
  totalMs: number;
}

export const CONTROLLER_RENDER_BUDGET: RenderBudget = { perTemplateMs: 250, totalMs: 5000 };

/** How liquidjs says a render ran out of time. */
const RENDER_LIMIT_HIT = 'template render limit exceeded';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Renders the prompt for each slot and the hook commands, and lays them out as the files
 * of the inputs volume with their manifest. Deterministic: the same run gives the same
 * bytes, so a re-created ConfigMap is identical. Template errors throw (LorenzError
 * template_render_error / template_parse_error) before anything is written, and so does a
 * render past the budget.
 */
export async function renderRunInputs(options: {
  workflowText: string;
  config: WorkflowConfig;
  promptTemplate: string;
  issue: Issue;
  run: RunDescriptor;
  budget?: RenderBudget;
  /** A review round: its prompt is review.continuation_prompt over the round's feedback. */
  review?: { config: ReviewConfig; context: ReviewPromptContext } | undefined;
}): Promise<RunInputs> {
  const { workflowText, config, promptTemplate, issue, run } = options;
  const budget = options.budget ?? CONTROLLER_RENDER_BUDGET;
  const deadline = performance.now() + budget.totalMs;
  const overBudget = (done: string) =>
    new LorenzError(
      'template_render_error',
      `rendering the run's inputs took longer than ${budget.totalMs} ms (done: ${done}): simplify the prompt or the hooks, or lower the ensemble size`,
    );
  /**
   * Renders one template after giving the event loop a turn, within what is left of the
   * budget (at most perTemplateMs); a render cut short by the budget reports the budget.
   */
  const bounded = async <T>(done: string, render: (limitMs: number) => T): Promise<T> => {
    await nextTurn();
    const left = Math.floor(deadline - performance.now());
    if (left <= 0) throw overBudget(done);
    const limit = Math.min(budget.perTemplateMs, left);
    try {
      return render(limit);
    } catch (error) {
      const cutShort = error instanceof Error && error.message.startsWith(RENDER_LIMIT_HIT);
      if (cutShort && limit < budget.perTemplateMs) throw overBudget(done);
      throw error;
    }
  };
  const hooks = await bounded('nothing yet', (limit) => renderHooks(config, issue, limit));
  const files: Record<string, string> = {
    [INPUT_FILES.workflow]: workflowText,
    [INPUT_FILES.issue]: `${JSON.stringify(issue, null, 2)}\n`,
    [INPUT_FILES.hooks]: `${JSON.stringify(hooks, null, 2)}\n`,
    [INPUT_FILES.run]: `${JSON.stringify(run, null, 2)}\n`,
  };
  for (let slot = 0; slot < run.ensembleSize; slot += 1) {
    const ensemble = ensembleContext(slot, run.ensembleSize);
    files[promptInputFile(slot)] = await bounded(
      `the hooks and ${slot} of ${run.ensembleSize} prompts`,
      (limit) =>
        options.review
          ? renderReviewPrompt(
              options.review.config,
              { issue, attempt: run.attempt, ensemble, ...options.review.context },
              limit,
            )
          : renderPrompt(promptTemplate, { issue, attempt: run.attempt, ensemble }, limit),
    );
  }
  const manifest = inputManifest(files);
  const manifestText = inputManifestText(manifest);
  files[INPUT_FILES.manifest] = manifestText;
  return { files, manifest, digest: inputDigest(manifestText) };
}

/** The immutable ConfigMap of an attempt's inputs (`<run>-inputs[-<attempt>]`), owned by the IssueRun. */
export function inputsConfigMap(options: {
  run: string;
  /** The attempt, when it is a retry (names its own ConfigMap). */
  attempt?: number;
  namespace: string;
  owner: V1OwnerReference;
  inputs: RunInputs;
}): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: inputsConfigMapName(options.run, options.attempt),
      namespace: options.namespace,
      labels: {
        [LABEL_MANAGED_BY]: MANAGED_BY,
        [LABEL_COMPONENT]: 'run-inputs',
        [LABEL_ISSUERUN]: labelValue(options.run),
      },
      annotations: { [ANNOTATION_INPUTS_DIGEST]: options.inputs.digest },
      ownerReferences: [options.owner],
    },
    immutable: true,
    data: options.inputs.files,
  };
}
