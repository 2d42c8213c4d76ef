import type { V1OwnerReference } from '@kubernetes/client-node';
import { API_VERSION, ISSUERUN_KIND, WORKFLOW_KIND } from '../../api/index.js';

/** The identity fields of an object the controller owns things for. */
export interface ObjectIdentity {
  name: string;
  namespace: string;
  uid: string;
}

/** The owner reference every object made for an IssueRun carries (GC and adoption). */
export function issueRunOwnerReference(run: ObjectIdentity): V1OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: ISSUERUN_KIND,
    name: run.name,
    uid: run.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** The owner reference of what the controller makes for a Workflow (its warm-up objects). */
export function workflowOwnerReference(workflow: ObjectIdentity): V1OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: WORKFLOW_KIND,
    name: workflow.name,
    uid: workflow.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}
