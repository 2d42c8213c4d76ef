import type { KubeClient } from '../runtime/client.js';
import { CONFIGMAPS, resourcePath } from '../runtime/client.js';
import { loadWorkflowText, type LoadedWorkflow } from '../../template/load-workflow.js';
import { SNAPSHOT_KEY, workflowDigest } from './config-snapshot.js';

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
