import type { KubeConfig } from '@kubernetes/client-node';

/**
 * What the node needs from a control plane. The harness's ControlPlane satisfies it; the
 * node only depends on this structural slice so that it can be tested and reused on its own.
 */
export interface ControlPlaneAccess {
  server: string;
  kubeConfig: KubeConfig;
  caCertPath: string;
  caKeyPath: string;
}

/** Host paths bound at container paths: `{ '/opt/lorenz': '/work/main/dist' }`. */
export type ImageBinds = Record<string, string>;

/** Image ref (or repository without tag/digest) → host paths bound at container paths. */
export type ImageMap = Record<string, ImageBinds>;

export type LogFn = (line: string) => void;

/**
 * A reason the node cannot run a container. The reason ends up as the container's waiting
 * (or, for ContainerCannotRun, terminated) reason; the node itself never fails on it.
 */
export type PodFailureReason = 'CreateContainerConfigError' | 'ContainerCannotRun';

export class PodConfigError extends Error {
  constructor(
    readonly reason: PodFailureReason,
    message: string,
    /** A missing object may appear later: the worker retries; a bad spec never heals. */
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'PodConfigError';
  }
}

export function describeError(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/** HTTP status of a client-node ApiException (or undefined for anything else). */
export function httpStatus(err: unknown): number | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err) {
    const code = err.code;
    if (typeof code === 'number') return code;
  }
  return undefined;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
