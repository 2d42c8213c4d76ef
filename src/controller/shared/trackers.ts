import type { Workflow } from '../../api/index.js';
import { sha256Hex } from '../../api/run-pod.js';
import { createTracker, type TrackerAdapter, type TrackerOptions } from '../../tracker/index.js';
import type { WorkflowConfig } from '../../workflow/config.js';
import { LorenzError } from '../../workflow/errors.js';
import type { KubeClient } from '../runtime/client.js';
import { CONFIGMAPS, isNotFound, resourcePath } from '../runtime/client.js';
import { trackerKey } from './tracker-key.js';

/** Builds an adapter (tests pass stand-ins). */
export type TrackerFactory = (config: WorkflowConfig, options: TrackerOptions) => TrackerAdapter;

/**
 * One adapter per Workflow for the whole controller, shared by the poll and the tools
 * gateway and kept while its settings, key and board stay the same: adapters remember
 * between calls (GitHub's ETags make an unchanged poll free), and a write the agent makes
 * through the gateway is what the next poll reads (the memory board).
 */
export function createTrackerCache(client: KubeClient, make: TrackerFactory = createTracker) {
  const entries = new Map<string, { fingerprint: string; adapter: TrackerAdapter }>();
  return {
    /** The Workflow's adapter, with its key from spec.trackerSecretRef and its board. */
    async get(workflow: Workflow, config: WorkflowConfig): Promise<TrackerAdapter> {
      const apiKey = await trackerKey(client, workflow);
      const files = await boardFiles(client, workflow);
      const key = `${workflow.metadata.namespace}/${workflow.metadata.name}`;
      const fingerprint = sha256Hex(
        JSON.stringify([config.tracker, apiKey ?? null, files ?? null]),
      );
      const known = entries.get(key);
      if (known?.fingerprint === fingerprint) return known.adapter;
      const adapter = make(config, {
        ...(apiKey === undefined ? {} : { apiKey }),
        ...(files === undefined ? {} : { files }),
      });
      entries.set(key, { fingerprint, adapter });
      return adapter;
    },
    forget(namespace: string, name: string): void {
      entries.delete(`${namespace}/${name}`);
    },
  };
}
export type TrackerCache = ReturnType<typeof createTrackerCache>;

/**
 * A local board kept in a ConfigMap (spec.trackerBoardRef), so a GitOps repo can hold it:
 * its data is the board's files. Read-only: the agent's writes are refused.
 */
async function boardFiles(
  client: KubeClient,
  workflow: Workflow,
): Promise<Record<string, string> | undefined> {
  const ref = workflow.spec.trackerBoardRef;
  if (!ref) return undefined;
  try {
    const configMap = await client.request<{ data?: Record<string, string> }>({
      path: resourcePath(CONFIGMAPS, workflow.metadata.namespace, ref.name),
    });
    return configMap.data ?? {};
  } catch (error) {
    if (isNotFound(error)) {
      throw new LorenzError(
        'invalid_tracker_config',
        `ConfigMap ${ref.name} (spec.trackerBoardRef) not found`,
      );
    }
    throw error;
  }
}
