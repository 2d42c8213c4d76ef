import {
  RUNNER_BUNDLE_FILE,
  RUNNER_LAUNCHER_FILE,
  RUNNER_SNAPSHOT_FILES,
  SCRIPTED_AGENT_FILE,
} from '../../api/run-pod.js';

/**
 * Labels, annotations and the operator image: the names both controllers, the pod builder
 * and the tests share. Paths and file names inside run Pods are the run-Pod contract
 * (src/api/run-pod.ts), which the runner imports too.
 */

/** The operator image: its init container copies the runner bundle into run Pods. */
export const OPERATOR_IMAGE_REPOSITORY = 'ghcr.io/lorenz-dev/lorenz';
export const OPERATOR_IMAGE_TAG = '0.1.0';
export const DEFAULT_OPERATOR_IMAGE = `${OPERATOR_IMAGE_REPOSITORY}:${OPERATOR_IMAGE_TAG}`;
/**
 * Where the bundled CLI lives inside the operator image: the init container copies it into
 * the runner volume, keeping its name (the run-Pod contract's RUNNER_BUNDLE_FILE).
 */
export const OPERATOR_IMAGE_BUNDLE_PATH = `/lorenz/${RUNNER_BUNDLE_FILE}`;
/** The scripted ACP agent beside it (the samples' and the demo's agent, no model needed). */
export const OPERATOR_IMAGE_SCRIPTED_AGENT_PATH = `/lorenz/${SCRIPTED_AGENT_FILE}`;
/** The launcher beside it, and the startup snapshot an image built by the Dockerfile has. */
export const OPERATOR_IMAGE_LAUNCHER_PATH = `/lorenz/${RUNNER_LAUNCHER_FILE}`;
export const OPERATOR_IMAGE_SNAPSHOT_PATHS = RUNNER_SNAPSHOT_FILES.map((file) => `/lorenz/${file}`);

/**
 * The finalizer every IssueRun carries while the run archive is on: its deletion (by the
 * poller, the TTL or a user) waits until the archiver has written the run's last record.
 */
export const ARCHIVE_FINALIZER = 'lorenz.dev/archive';

export const LABEL_ISSUERUN = 'lorenz.dev/issuerun';
export const LABEL_WORKFLOW = 'lorenz.dev/workflow';
export const LABEL_SLOT = 'lorenz.dev/slot';
export const LABEL_ATTEMPT = 'lorenz.dev/attempt';
/**
 * On a Workflow's warm-up objects (Pod, inputs ConfigMap, claim) and its warm VolumeSnapshots:
 * the Workflow. Never beside LABEL_ISSUERUN: what watches run objects leaves these alone.
 */
export const LABEL_WARM_OF = 'lorenz.dev/warm-of';
export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'lorenz';
/** Marks ConfigMaps the controller writes (inputs, config snapshots). */
export const LABEL_COMPONENT = 'app.kubernetes.io/component';

/** Tracker state of the issue, projected into run Pods by the downward API. */
export const ANNOTATION_ISSUE_STATE = 'lorenz.dev/issue-state';
/** On a dispatched IssueRun: the tracker's id of its issue (what the dispatcher refreshes). */
export const ANNOTATION_ISSUE_ID = 'lorenz.dev/issue-id';
/**
 * On a dispatched IssueRun the dispatcher stopped: what it saw on the tracker (the state the
 * issue moved to, or that it is gone, and who moved it when the tracker says). The run's
 * Cancelled message quotes it.
 */
export const ANNOTATION_STOP_NOTE = 'lorenz.dev/stop-note';
/** sha256 of the inputs manifest, so a Pod records which inputs it ran. */
export const ANNOTATION_INPUTS_DIGEST = 'lorenz.dev/inputs-digest';
/** On a warm-up Pod: the warm config digest it was made for (recorded once it succeeds). */
export const ANNOTATION_WARM_CONFIG_DIGEST = 'lorenz.dev/warm-config-digest';
/** sha256 of a config snapshot's WORKFLOW.md. */
export const ANNOTATION_CONFIG_DIGEST = 'lorenz.dev/config-digest';
/** The component label value of an attempt's agent-tools token Secret. */
export const COMPONENT_TOOLS_TOKEN = 'tools-token';
/** On a tools token Secret: hex sha256 of the token, so the gateway checks a hash, not the value. */
export const ANNOTATION_TOKEN_SHA256 = 'lorenz.dev/token-sha256';
