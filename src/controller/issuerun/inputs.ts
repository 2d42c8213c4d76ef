import type { V1ConfigMap, V1OwnerReference } from '@kubernetes/client-node';
import type { WorkflowConfig } from '../../workflow/config.js';
import type { Issue } from '../../workflow/issue.js';
import { ensembleContext, renderPrompt } from '../../template/prompt.js';
import { renderHooks } from '../../runner/rendered-hooks.js';
import {
  INPUT_HOOKS,
  INPUT_ISSUE,
  INPUT_MANIFEST,
  INPUT_RUN,
  INPUT_WORKFLOW,
  LABEL_COMPONENT,
  LABEL_ISSUERUN,
  LABEL_MANAGED_BY,
  MANAGED_BY,
  promptInputKey,
} from './constants.js';
import { inputsConfigMapName, labelValue, sha256Hex } from './names.js';

/** What the runner needs besides the files: which run, which attempt, how many slots. */
export interface RunDescriptor {
  run: string;
  identifier: string;
  attempt: number | null;
  ensembleSize: number;
}

export interface InputManifest {
  version: 1;
  /** File name → `sha256:<hex>` of its exact text. */
  files: Record<string, string>;
}

export interface RunInputs {
  /** Every file the runner reads, manifest.json included. */
  files: Record<string, string>;
  manifest: InputManifest;
  /** sha256 of manifest.json: one value naming the whole input set. */
  digest: string;
}

export const digestOf = (text: string): string => `sha256:${sha256Hex(text)}`;

/**
 * Renders the prompt for each slot and the hook commands, and lays them out as the files
 * of the inputs volume with their manifest. Pure and deterministic: the same run gives the
 * same bytes, so a re-created ConfigMap is identical. Template errors throw (LorenzError
 * template_render_error / template_parse_error) before anything is written.
 */
export function renderRunInputs(options: {
  workflowText: string;
  config: WorkflowConfig;
  promptTemplate: string;
  issue: Issue;
  run: RunDescriptor;
}): RunInputs {
  const { workflowText, config, promptTemplate, issue, run } = options;
  const hooks = renderHooks(config, issue);
  const files: Record<string, string> = {
    [INPUT_WORKFLOW]: workflowText,
    [INPUT_ISSUE]: `${JSON.stringify(issue, null, 2)}\n`,
    [INPUT_HOOKS]: `${JSON.stringify(hooks, null, 2)}\n`,
    [INPUT_RUN]: `${JSON.stringify(run, null, 2)}\n`,
  };
  for (let slot = 0; slot < run.ensembleSize; slot += 1) {
    files[promptInputKey(slot)] = renderPrompt(promptTemplate, {
      issue,
      attempt: run.attempt,
      ensemble: ensembleContext(slot, run.ensembleSize),
    });
  }
  const manifest: InputManifest = { version: 1, files: {} };
  for (const name of Object.keys(files).sort()) {
    manifest.files[name] = digestOf(files[name] ?? '');
  }
  const manifestText = `${JSON.stringify(manifest, null, 2)}\n`;
  files[INPUT_MANIFEST] = manifestText;
  return { files, manifest, digest: digestOf(manifestText) };
}

/** The immutable ConfigMap `<run>-inputs`, owned by the IssueRun. */
export function inputsConfigMap(options: {
  run: string;
  namespace: string;
  owner: V1OwnerReference;
  inputs: RunInputs;
}): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: inputsConfigMapName(options.run),
      namespace: options.namespace,
      labels: {
        [LABEL_MANAGED_BY]: MANAGED_BY,
        [LABEL_COMPONENT]: 'run-inputs',
        [LABEL_ISSUERUN]: labelValue(options.run),
      },
      annotations: { 'lorenz.dev/inputs-digest': options.inputs.digest },
      ownerReferences: [options.owner],
    },
    immutable: true,
    data: options.inputs.files,
  };
}
