import type { V1PersistentVolumeClaim, V1PersistentVolumeClaimSpec } from '@kubernetes/client-node';
import { SNAPSHOT_API_GROUP, VOLUME_SNAPSHOT_KIND } from '../../api/workspace-source.js';
import {
  LABEL_ISSUERUN,
  LABEL_MANAGED_BY,
  LABEL_SLOT,
  LABEL_WORKFLOW,
  MANAGED_BY,
} from '../shared/constants.js';
import { labelValue, workspaceClaimName } from '../shared/object-names.js';
import { issueRunOwnerReference, type ObjectIdentity } from '../shared/owner.js';

/** The labels of what Lorenz makes for one slot of a run: its Pods and its workspace claim. */
export const slotLabels = (options: {
  run: ObjectIdentity;
  workflowName: string;
  slot: number;
}): Record<string, string> => ({
  [LABEL_ISSUERUN]: labelValue(options.run.name),
  [LABEL_WORKFLOW]: labelValue(options.workflowName),
  [LABEL_SLOT]: String(options.slot),
  [LABEL_MANAGED_BY]: MANAGED_BY,
});

/** The workspace claim of a slot, owned by the IssueRun (kept across attempts). */
export function workspaceClaim(options: {
  run: ObjectIdentity;
  workflowName: string;
  slot: number;
  spec: V1PersistentVolumeClaimSpec;
  /** A VolumeSnapshot (in the run's namespace) the claim is restored from; absent: empty. */
  fromSnapshot?: string | undefined;
}): V1PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: workspaceClaimName(options.run.name, options.slot),
      namespace: options.run.namespace,
      labels: slotLabels(options),
      ownerReferences: [issueRunOwnerReference(options.run)],
    },
    spec:
      options.fromSnapshot === undefined
        ? options.spec
        : {
            ...options.spec,
            dataSource: {
              apiGroup: SNAPSHOT_API_GROUP,
              kind: VOLUME_SNAPSHOT_KIND,
              name: options.fromSnapshot,
            },
          },
  };
}
