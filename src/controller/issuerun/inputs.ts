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
import { inputsConfigMapName, labelValue } from '../shared/names.js';

export interface RunInputs {
  /** Every file the runner reads, manifest.json included. */
  files: Record<string, string>;
  manifest: InputManifest;
  /** sha256 of manifest.json: one value naming the whole input set. */
  digest: string;
}

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
    [INPUT_FILES.workflow]: workflowText,
    [INPUT_FILES.issue]: `${JSON.stringify(issue, null, 2)}\n`,
    [INPUT_FILES.hooks]: `${JSON.stringify(hooks, null, 2)}\n`,
    [INPUT_FILES.run]: `${JSON.stringify(run, null, 2)}\n`,
  };
  for (let slot = 0; slot < run.ensembleSize; slot += 1) {
    files[promptInputFile(slot)] = renderPrompt(promptTemplate, {
      issue,
      attempt: run.attempt,
      ensemble: ensembleContext(slot, run.ensembleSize),
    });
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
