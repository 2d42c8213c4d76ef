// Which image run Pods copy the runner from: the flag, then LORENZ_OPERATOR_IMAGE, then the
// controller's own container read from its Pod (what `kustomize edit set image` changes),
// then the built-in default; a Pod named but unreadable or without the container is an error.
import { describe, expect, it } from 'vitest';
import { DEFAULT_OPERATOR_IMAGE } from '../../../../src/controller/shared/constants.js';
import {
  OperatorImageError,
  resolveOperatorImage,
} from '../../../../src/controller/shared/operator-image.js';

const POD = {
  metadata: { name: 'lorenz-controller-7d9f-abcde', namespace: 'lorenz-system' },
  spec: {
    containers: [
      { name: 'sidecar', image: 'example/sidecar:1' },
      { name: 'controller', image: 'registry.example/lorenz:1.2.3' },
    ],
  },
};
const IN_POD = { POD_NAME: 'lorenz-controller-7d9f-abcde', POD_NAMESPACE: 'lorenz-system' };

/** A Pod reader that serves POD by name and records what it was asked. */
function podsOf(pod: object | Error = POD) {
  const asked: string[] = [];
  const readPod = (namespace: string, name: string): Promise<unknown> => {
    asked.push(`${namespace}/${name}`);
    if (pod instanceof Error) return Promise.reject(pod);
    return Promise.resolve(pod);
  };
  return { asked, readPod };
}

describe('resolveOperatorImage', () => {
  it.each<[string, string | undefined, Record<string, string>, string, string]>([
    [
      'the flag wins over everything',
      'flag.example/lorenz:9',
      { LORENZ_OPERATOR_IMAGE: 'env.example/lorenz:8', ...IN_POD },
      'flag.example/lorenz:9',
      '--operator-image',
    ],
    [
      'LORENZ_OPERATOR_IMAGE wins over the Pod',
      undefined,
      { LORENZ_OPERATOR_IMAGE: 'env.example/lorenz:8', ...IN_POD },
      'env.example/lorenz:8',
      'LORENZ_OPERATOR_IMAGE',
    ],
    [
      'in a Pod: the image of its container named controller',
      undefined,
      IN_POD,
      'registry.example/lorenz:1.2.3',
      'container controller of Pod lorenz-system/lorenz-controller-7d9f-abcde',
    ],
    [
      'in a Pod: LORENZ_CONTAINER_NAME picks another container',
      undefined,
      { ...IN_POD, LORENZ_CONTAINER_NAME: 'sidecar' },
      'example/sidecar:1',
      'container sidecar of Pod lorenz-system/lorenz-controller-7d9f-abcde',
    ],
    [
      'an empty LORENZ_OPERATOR_IMAGE counts as unset',
      undefined,
      { LORENZ_OPERATOR_IMAGE: '', ...IN_POD },
      'registry.example/lorenz:1.2.3',
      'container controller of Pod lorenz-system/lorenz-controller-7d9f-abcde',
    ],
    [
      'outside a cluster: the built-in default',
      undefined,
      {},
      DEFAULT_OPERATOR_IMAGE,
      'the built-in default',
    ],
  ])('%s', async (_case, flag, env, image, source) => {
    const pods = podsOf();
    expect(await resolveOperatorImage({ flag, env, readPod: pods.readPod })).toEqual({
      image,
      source,
    });
    // The Pod is read only when nothing above it says.
    expect(pods.asked).toEqual(
      source.startsWith('container') ? [`lorenz-system/${IN_POD.POD_NAME}`] : [],
    );
  });

  it.each<[string, Record<string, string>, object | Error, RegExp]>([
    [
      'the Pod cannot be read',
      IN_POD,
      new Error('GET /api/v1/namespaces/lorenz-system/pods/x: 403 forbidden'),
      /cannot read the controller's own Pod lorenz-system\/lorenz-controller-7d9f-abcde to learn its image \(GET .*403 forbidden\): grant get on pods in lorenz-system, or set LORENZ_OPERATOR_IMAGE or --operator-image/,
    ],
    [
      'the Pod has no such container',
      { ...IN_POD, LORENZ_CONTAINER_NAME: 'manager' },
      POD,
      /has no container named manager with an image \(its containers: sidecar, controller\): set LORENZ_CONTAINER_NAME/,
    ],
    [
      'only the Pod name is set',
      { POD_NAME: 'x' },
      POD,
      /POD_NAMESPACE is not set .*set both from the downward API, or set LORENZ_OPERATOR_IMAGE/,
    ],
  ])('refuses to guess when %s', async (_case, env, pod, message) => {
    const error = await resolveOperatorImage({ env, readPod: podsOf(pod).readPod }).then(
      () => undefined,
      (rejected: unknown) => rejected,
    );
    expect(error).toBeInstanceOf(OperatorImageError);
    expect((error as OperatorImageError).code).toBe('operator_image_unresolved');
    expect((error as Error).message).toMatch(message);
  });
});
