/** The API group and version of every Lorenz custom resource. */
export const GROUP = 'lorenz.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

export const WORKFLOW_KIND = 'Workflow';
export const WORKFLOW_PLURAL = 'workflows';
export const WORKFLOW_SINGULAR = 'workflow';
/** Argo Workflows also has a kind named Workflow: `kubectl get lwf` is never ambiguous. */
export const WORKFLOW_SHORT_NAMES: readonly string[] = ['lwf'];

export const ISSUERUN_KIND = 'IssueRun';
export const ISSUERUN_PLURAL = 'issueruns';
export const ISSUERUN_SINGULAR = 'issuerun';
export const ISSUERUN_SHORT_NAMES: readonly string[] = ['ir'];

/** `kubectl get lorenz` lists both kinds (Workflows and IssueRuns) and nothing else. */
export const CATEGORIES: readonly string[] = ['lorenz'];
