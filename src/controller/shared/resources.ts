import type { V1Pod } from '@kubernetes/client-node';
import { GROUP, ISSUERUN_PLURAL, VERSION, WORKFLOW_PLURAL } from '../../api/index.js';
import type { KubeObject } from '../runtime/informer.js';

/** The resources the controllers watch and write, as the JSON client addresses them. */
export const ISSUERUNS = { group: GROUP, version: VERSION, plural: ISSUERUN_PLURAL };
export const WORKFLOWS = { group: GROUP, version: VERSION, plural: WORKFLOW_PLURAL };

export type PodObject = V1Pod & KubeObject;
/** A ConfigMap as the JSON client reads it. */
export type ConfigMapObject = KubeObject & { data?: Record<string, string> };
