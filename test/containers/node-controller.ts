// The controller of the real-node cases (real-node-controller.ts, snapshot-start.ts,
// warm-start.ts): each describe starts one over its namespace in its beforeAll, once what the
// controller should find is there, and stops it after its cases.
import { afterAll } from 'vitest';
import type { ControllerRunOptions, RunningController } from '../../src/controller/main.js';
import type { KubeClient } from '../../src/controller/runtime/client.js';
import { controllerKubeConfig, startTestController } from '../integration/operator-harness.js';
import type { RealNode } from './real-node-env.js';

/**
 * Registers, in the calling describe, an afterAll that stops the controller and closes
 * `admin()`; returns the start: the controller over `namespace` of `node`, in the operator
 * image of `images()`, `overrides` added.
 */
export function controllerOnNode(
  namespace: string,
  images: () => { operator: string },
  admin: () => KubeClient | undefined,
): (node: RealNode, overrides?: Partial<ControllerRunOptions>) => Promise<void> {
  let controller: RunningController | undefined;
  afterAll(async () => {
    await controller?.stop();
    admin()?.close();
  });
  return async (node, overrides = {}) => {
    controller = await startTestController(controllerKubeConfig(node.cp), namespace, {
      operatorImage: images().operator,
      ...overrides,
    });
  };
}
