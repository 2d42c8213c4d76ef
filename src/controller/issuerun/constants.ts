import { RUNNER_INIT_CONTAINER_NAME, RUN_POD_VOLUME_NAMES } from '../../api/constants.js';

/**
 * Names shared by the pod builder, the reconcilers, the runner and the tests. One place, so
 * that the image the integration tests map on the process node is the image the pod builder
 * puts in the init container.
 */

/** The operator image: its init container copies the runner bundle into run Pods. */
export const OPERATOR_IMAGE_REPOSITORY = 'ghcr.io/lorenz-dev/lorenz';
export const OPERATOR_IMAGE_TAG = '0.1.0';
export const DEFAULT_OPERATOR_IMAGE = `${OPERATOR_IMAGE_REPOSITORY}:${OPERATOR_IMAGE_TAG}`;
/** Where the bundled CLI lives inside the operator image. */
export const OPERATOR_IMAGE_BUNDLE_PATH = '/lorenz/lorenz.js';
/** The scripted ACP agent beside it (the samples' and the demo's agent, no model needed). */
export const OPERATOR_IMAGE_SCRIPTED_AGENT_PATH = '/lorenz/scripted-agent.mjs';

export const LABEL_ISSUERUN = 'lorenz.dev/issuerun';
export const LABEL_WORKFLOW = 'lorenz.dev/workflow';
export const LABEL_SLOT = 'lorenz.dev/slot';
export const LABEL_ATTEMPT = 'lorenz.dev/attempt';
export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'lorenz';
/** Marks ConfigMaps the controller writes (inputs, config snapshots). */
export const LABEL_COMPONENT = 'app.kubernetes.io/component';

/** Tracker state of the issue, projected into run Pods by the downward API. */
export const ANNOTATION_ISSUE_STATE = 'lorenz.dev/issue-state';
/** sha256 of the inputs manifest, so a Pod records which inputs it ran. */
export const ANNOTATION_INPUTS_DIGEST = 'lorenz.dev/inputs-digest';

export const INIT_CONTAINER_NAME = RUNNER_INIT_CONTAINER_NAME;
export const AGENT_CONTAINER_NAME = 'agent';

/** Mount points inside run Pods. */
export const RUNNER_BIN_DIR = '/lorenz-bin';
export const INPUTS_DIR = '/lorenz/inputs';
export const PODINFO_DIR = '/lorenz/podinfo';
export const ISSUE_STATE_FILE = 'issue-state';
export const WORKSPACE_DIR = '/workspace';
export const TERMINATION_LOG_PATH = '/dev/termination-log';

export const VOLUME_RUNNER_BIN = RUN_POD_VOLUME_NAMES.runnerBin;
export const VOLUME_INPUTS = RUN_POD_VOLUME_NAMES.inputs;
export const VOLUME_PODINFO = RUN_POD_VOLUME_NAMES.podinfo;
export const VOLUME_WORKSPACE = RUN_POD_VOLUME_NAMES.workspace;

/** The non-root uid run Pods use unless the template picks one (distroless "nonroot"). */
export const DEFAULT_RUN_AS_USER = 65532;

/** Inputs ConfigMap keys. */
export const INPUT_MANIFEST = 'manifest.json';
export const INPUT_WORKFLOW = 'workflow.md';
export const INPUT_ISSUE = 'issue.json';
export const INPUT_HOOKS = 'hooks.json';
export const INPUT_RUN = 'run.json';
export const promptInputKey = (slot: number): string => `prompt-${slot}.md`;
