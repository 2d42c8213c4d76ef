// The controller of the real-node cases (real-node-controller.ts, snapshot-start.ts,
// warm-start.ts): each describe starts one over its namespace in its beforeAll, once what the
// controller should find is there, and stops it after its cases.
import { afterAll } from 'vitest';
import type { ControllerRunOptions, RunningController } from '../../src/controller/main.js';
import { createKubeClient, type KubeClient } from '../../src/controller/runtime/client.js';
import { controllerKubeConfig, startTestController } from '../integration/operator-harness.js';
import { lorenzApi } from './lorenz-api.js';
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

/**
 * What each of those describes starts from, declared in it: the lorenz.dev API of `namespace`
 * (lorenzApi), the controller's start (controllerOnNode), and `enter(node)`, the first step of
 * its beforeAll: the namespace made on the node (Pod Security restricted) and the admin client
 * the other two go through.
 */
export function namespaceOnNode(namespace: string, images: () => { operator: string }) {
  let admin: KubeClient;
  const startController = controllerOnNode(namespace, images, () => admin);
  return {
    ...lorenzApi(() => admin, namespace),
    startController,
    enter: async (node: RealNode): Promise<void> => {
      await node.createRestrictedNamespace(namespace);
      admin = createKubeClient(node.cp.kubeConfig);
    },
  };
}
