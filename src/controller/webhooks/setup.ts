import type { Logger } from 'pino';
import type { Workflow } from '../../api/index.js';
import type { KubeClient } from '../runtime/client.js';
import type { Manager } from '../runtime/manager.js';
import { WORKFLOWS } from '../shared/resources.js';
import type { WakeBoard } from '../shared/wake.js';
import { startWebhookReceiver, type WebhookReceiver } from './receiver.js';
import { createSecretSource } from './secrets.js';

export interface WebhookReceiverSetup {
  client: KubeClient;
  logger: Logger;
  /** host:port to listen on (`:8092`; `127.0.0.1:0` in tests). */
  bindAddress: string;
  board: WakeBoard;
}

/**
 * The webhook receiver of the controller (docs/webhooks.md), on a port of its own. Every
 * replica serves it: the Workflows come from the shared informer and a wake only enqueues,
 * so a replica that does not lead wakes nothing until it does. Stopped with the controller.
 */
export async function setupWebhookReceiver(
  manager: Manager,
  options: WebhookReceiverSetup,
): Promise<WebhookReceiver> {
  const workflows = manager.informer<Workflow>(WORKFLOWS);
  const receiver = await startWebhookReceiver({
    bindAddress: options.bindAddress,
    workflows,
    secrets: createSecretSource(options.client),
    board: options.board,
    registry: manager.metrics.registry,
    logger: options.logger,
  });
  options.logger.info({ port: receiver.port }, 'webhook receiver listening');
  return receiver;
}
