import type { V1ConfigMap } from '@kubernetes/client-node';
import { API_VERSION, WORKFLOW_KIND } from '../../api/index.js';
import { sha256Hex } from '../../api/run-pod.js';
import {
  ANNOTATION_CONFIG_DIGEST,
  LABEL_COMPONENT,
  LABEL_MANAGED_BY,
  LABEL_WORKFLOW,
  MANAGED_BY,
} from './constants.js';
import { configSnapshotName, labelValue } from './object-names.js';
import type { ObjectIdentity } from './owner.js';
import type { KubeClient } from '../runtime/client.js';
import { CONFIGMAPS, resourcePath } from '../runtime/client.js';
import { loadWorkflowText, type LoadedWorkflow } from '../../template/load-workflow.js';

/**
 * The last good WORKFLOW.md of a Workflow, kept in an immutable ConfigMap named by its
 * digest. IssueRuns render from it, so a bad edit of the Workflow (or of the ConfigMap it
 * points to) never reaches a run: the previous good text keeps running.
 */
export const SNAPSHOT_KEY = 'WORKFLOW.md';

export const workflowDigest = (text: string): string => `sha256:${sha256Hex(text)}`;

export function snapshotConfigMap(workflow: ObjectIdentity, text: string): V1ConfigMap {
  const digest = workflowDigest(text);
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: configSnapshotName(workflow.name, sha256Hex(text)),
      namespace: workflow.namespace,
      labels: {
        [LABEL_MANAGED_BY]: MANAGED_BY,
        [LABEL_COMPONENT]: 'workflow-config',
        [LABEL_WORKFLOW]: labelValue(workflow.name),
      },
      annotations: { [ANNOTATION_CONFIG_DIGEST]: digest },
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: WORKFLOW_KIND,
          name: workflow.name,
          uid: workflow.uid,
          controller: true,
        },
      ],
    },
    immutable: true,
    data: { [SNAPSHOT_KEY]: text },
  };
}

export interface RunnableWorkflow {
  text: string;
  digest: string;
  loaded: LoadedWorkflow;
}

/**
 * Reads a Workflow's last good WORKFLOW.md from its snapshot ConfigMap. Snapshots are
 * immutable and named by digest, so a parsed one is cached by name for good (bounded).
 */
export function createWorkflowConfigCache(client: KubeClient, limit = 256) {
  const cache = new Map<string, RunnableWorkflow>();
  return async function load(namespace: string, configMap: string): Promise<RunnableWorkflow> {
    const key = `${namespace}/${configMap}`;
    const cached = cache.get(key);
    if (cached) return cached;
    const object = await client.request<{ data?: Record<string, string> }>({
      path: resourcePath(CONFIGMAPS, namespace, configMap),
    });
    const text = object.data?.[SNAPSHOT_KEY] ?? '';
    const runnable = {
      text,
      digest: workflowDigest(text),
      loaded: loadWorkflowText(text, `ConfigMap ${configMap}`),
    };
    if (cache.size >= limit) cache.delete(cache.keys().next().value as string);
    cache.set(key, runnable);
    return runnable;
  };
}
