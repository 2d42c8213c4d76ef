import type { KubeConfig } from '@kubernetes/client-node';
import { PODS, createKubeClient, resourcePath } from '../runtime/client.js';
import { DEFAULT_OPERATOR_IMAGE } from './constants.js';

/**
 * The image run Pods copy the runner from. A kustomize install changes the controller's image
 * with `kustomize edit set image`, which rewrites container images and nothing else: an
 * environment variable naming the image would keep the old one. So the controller reads the
 * image of its own container from its Pod (the downward API gives the Pod's name, not its
 * images), unless told outright.
 */

/** Environment variables the resolution reads (the Deployment sets them). */
export const OPERATOR_IMAGE_ENV = {
  /** An explicit image (the chart sets it); wins over the Pod's. */
  image: 'LORENZ_OPERATOR_IMAGE',
  /** The controller's own Pod, from the downward API (metadata.name, metadata.namespace). */
  podName: 'POD_NAME',
  podNamespace: 'POD_NAMESPACE',
  /** Its container in that Pod; `controller` unless set. */
  containerName: 'LORENZ_CONTAINER_NAME',
} as const;

const DEFAULT_CONTAINER_NAME = 'controller';

export interface OperatorImage {
  image: string;
  /** Where it came from, for the log line: a flag, a variable, a Pod's container, the default. */
  source: string;
}

export class OperatorImageError extends Error {
  readonly code = 'operator_image_unresolved';
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'OperatorImageError';
  }
}

interface PodView {
  spec?: { containers?: { name?: string; image?: string }[] };
}

/**
 * In order: `flag` (--operator-image, or a caller's option), LORENZ_OPERATOR_IMAGE, the image
 * of this container in the Pod POD_NAMESPACE/POD_NAME, else the built-in default (a process
 * outside a cluster: `make dev`, the tests). A Pod named but unreadable, or without the
 * container, is an error: run Pods with a guessed runner would fail later and obscurely.
 */
export async function resolveOperatorImage(input: {
  flag?: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  /** GET of a Pod (the controller's client; RBAC grants get on pods). */
  readPod: (namespace: string, name: string) => Promise<unknown>;
}): Promise<OperatorImage> {
  if (input.flag) return { image: input.flag, source: '--operator-image' };
  const fromEnv = input.env[OPERATOR_IMAGE_ENV.image];
  if (fromEnv) return { image: fromEnv, source: OPERATOR_IMAGE_ENV.image };
  const name = input.env[OPERATOR_IMAGE_ENV.podName];
  const namespace = input.env[OPERATOR_IMAGE_ENV.podNamespace];
  if (!name && !namespace) return { image: DEFAULT_OPERATOR_IMAGE, source: 'the built-in default' };
  if (!name || !namespace) {
    const missing = name ? OPERATOR_IMAGE_ENV.podNamespace : OPERATOR_IMAGE_ENV.podName;
    throw new OperatorImageError(
      `${missing} is not set (the other of ${OPERATOR_IMAGE_ENV.podName}/${OPERATOR_IMAGE_ENV.podNamespace} is): set both from the downward API, or set ${OPERATOR_IMAGE_ENV.image}`,
    );
  }
  const containerName = input.env[OPERATOR_IMAGE_ENV.containerName] || DEFAULT_CONTAINER_NAME;
  let pod: PodView;
  try {
    pod = (await input.readPod(namespace, name)) as PodView;
  } catch (error) {
    throw new OperatorImageError(
      `cannot read the controller's own Pod ${namespace}/${name} to learn its image (${error instanceof Error ? error.message : String(error)}): grant get on pods in ${namespace}, or set ${OPERATOR_IMAGE_ENV.image} or --operator-image`,
      { cause: error },
    );
  }
  const containers = pod.spec?.containers ?? [];
  const own = containers.find((container) => container.name === containerName);
  if (!own?.image) {
    const names = containers.map((container) => container.name ?? '?').join(', ') || 'none';
    throw new OperatorImageError(
      `Pod ${namespace}/${name} has no container named ${containerName} with an image (its containers: ${names}): set ${OPERATOR_IMAGE_ENV.containerName} to the controller's container, or set ${OPERATOR_IMAGE_ENV.image}`,
    );
  }
  return {
    image: own.image,
    source: `container ${containerName} of Pod ${namespace}/${name}`,
  };
}

/** `readPod` for resolveOperatorImage: one GET with a client of its own, closed after. */
export const podReader =
  (kubeConfig: KubeConfig) =>
  async (namespace: string, name: string): Promise<unknown> => {
    const client = createKubeClient(kubeConfig);
    try {
      return await client.request({ path: resourcePath(PODS, namespace, name) });
    } finally {
      client.close();
    }
  };
