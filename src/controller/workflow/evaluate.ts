import type { V1PodTemplateSpec } from '@kubernetes/client-node';
import { Reasons, type Workflow } from '../../api/index.js';
import { checkHookTemplate } from '../../template/hook.js';
import { loadWorkflowText, type LoadedWorkflow } from '../../template/load-workflow.js';
import { createBoundedCache, memoized } from '../../workflow/bounded-cache.js';
import { HOOK_FIELDS } from '../../workflow/config.js';
import { errorMessage } from '../../workflow/errors.js';
import { HOOK_NAMES } from '../../workflow/events.js';
import { workflowDigest } from '../shared/config-snapshot.js';
import { podTemplateProblems, type PodTemplatePolicy } from '../shared/pod-template-check.js';
import type { ConfigMapObject } from '../shared/resources.js';

/** Why a Workflow's current spec cannot run: a condition reason and a message naming what. */
export interface WorkflowProblem {
  reason: string;
  message: string;
}

/** A spec that loads: its WORKFLOW.md text, where it came from, and the parsed result. */
export interface LoadedSpec {
  text: string;
  source: string;
  digest: string;
  loaded: LoadedWorkflow;
}

export type Evaluation = { ok: true; spec: LoadedSpec } | { ok: false; problem: WorkflowProblem };

type Source = { ok: true; text: string; source: string } | { ok: false; problem: WorkflowProblem };

/** Where WORKFLOW.md comes from: the spec inline, or a ConfigMap key. */
function readWorkflowSource(
  workflow: Workflow,
  getConfigMap: (namespace: string, name: string) => ConfigMapObject | undefined,
): Source {
  const name = workflow.metadata.name ?? '';
  if (workflow.spec.workflow !== undefined) {
    return { ok: true, text: workflow.spec.workflow, source: `Workflow ${name} spec.workflow` };
  }
  const ref = workflow.spec.workflowFrom?.configMapKeyRef;
  if (!ref) {
    const message = 'neither spec.workflow nor spec.workflowFrom is set';
    return { ok: false, problem: { reason: Reasons.ConfigInvalid, message } };
  }
  const configMap = getConfigMap(workflow.metadata.namespace ?? '', ref.name);
  if (!configMap) {
    const message = `ConfigMap ${ref.name} not found`;
    return { ok: false, problem: { reason: Reasons.ConfigMapNotFound, message } };
  }
  const text = configMap.data?.[ref.key];
  if (text === undefined) {
    const message = `ConfigMap ${ref.name} has no key ${ref.key}`;
    return { ok: false, problem: { reason: Reasons.ConfigMapNotFound, message } };
  }
  return { ok: true, text, source: `ConfigMap ${ref.name} key ${ref.key}` };
}

type Checked = LoadedWorkflow | { problem: WorkflowProblem };

/**
 * What each WORKFLOW.md text loaded to, by source and text. The Workflow controller
 * evaluates on every reconcile (each run's change of counts makes one), and parsing the
 * YAML and templates again was most of that reconcile's CPU. Loading is pure, and what it
 * returns is only read, so a text's result is shared. Bounded: the oldest goes first.
 */
const checkedTexts = createBoundedCache<string, Checked>(64);

function loadChecked(text: string, source: string): Checked {
  return memoized(checkedTexts, `${source}\u0000${text}`, () => check(text, source));
}

function check(text: string, source: string): Checked {
  try {
    const loaded = loadWorkflowText(text, source);
    // Hooks render only when a run starts; parse them now, as `lorenz workflow validate`
    // does, so a broken hook template is refused here and not by every run's inputs.
    for (const name of HOOK_NAMES) {
      const command = loaded.config.hooks[HOOK_FIELDS[name]];
      if (command !== null) checkHookTemplate(name, command);
    }
    return loaded;
  } catch (error) {
    return { problem: { reason: Reasons.ConfigInvalid, message: errorMessage(error) } };
  }
}

/**
 * Pure: source → load (WORKFLOW.md parses and validates, its prompt template parses) →
 * pod template check → digest. The first step that fails is the problem.
 */
export function evaluateWorkflow(
  workflow: Workflow,
  getConfigMap: (namespace: string, name: string) => ConfigMapObject | undefined,
  policy?: PodTemplatePolicy,
): Evaluation {
  const source = readWorkflowSource(workflow, getConfigMap);
  if (!source.ok) return source;
  const loaded = loadChecked(source.text, source.source);
  if ('problem' in loaded) return { ok: false, problem: loaded.problem };
  const templateProblems = podTemplateProblems(
    workflow.spec.podTemplate as V1PodTemplateSpec | undefined,
    policy,
  );
  if (templateProblems.length > 0) {
    const message = templateProblems.join('; ');
    return { ok: false, problem: { reason: Reasons.WorkflowInvalid, message } };
  }
  const spec = { text: source.text, source: source.source, digest: workflowDigest(source.text) };
  return { ok: true, spec: { ...spec, loaded } };
}
