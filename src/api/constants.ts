/** The API group and version of every Lorenz custom resource. */
export const GROUP = 'lorenz.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

export const WORKFLOW_KIND = 'Workflow';
export const WORKFLOW_PLURAL = 'workflows';
export const WORKFLOW_SINGULAR = 'workflow';

export const ISSUERUN_KIND = 'IssueRun';
export const ISSUERUN_PLURAL = 'issueruns';
export const ISSUERUN_SINGULAR = 'issuerun';
export const ISSUERUN_SHORT_NAMES: readonly string[] = ['ir'];

/** `kubectl get lorenz` lists both kinds. */
export const CATEGORIES: readonly string[] = ['lorenz'];
