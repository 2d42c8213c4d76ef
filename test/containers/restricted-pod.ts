// A Pod of the containers tier's own (not a run Pod) as the `restricted` Pod Security level
// admits it and run Pods are shaped: never restarted, no API token, non-root as the run Pods'
// user, the runtime's seccomp profile; its containers without privilege escalation or
// capabilities (RESTRICTED_CONTAINER).
import { DEFAULT_RUN_AS_USER } from '../../src/controller/issuerun/pod-builder.js';

/** A container's securityContext as `restricted` asks for it. */
export const RESTRICTED_CONTAINER = {
  allowPrivilegeEscalation: false,
  capabilities: { drop: ['ALL'] },
};

/** Pod `name` in `namespace`; `podSecurity` adds to its securityContext, `spec` to its spec. */
export const restrictedPod = (
  name: string,
  namespace: string,
  podSecurity: object,
  spec: { containers: object[] } & Record<string, unknown>,
) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace },
  spec: {
    restartPolicy: 'Never',
    automountServiceAccountToken: false,
    securityContext: {
      runAsNonRoot: true,
      runAsUser: DEFAULT_RUN_AS_USER,
      seccompProfile: { type: 'RuntimeDefault' },
      ...podSecurity,
    },
    ...spec,
  },
});
