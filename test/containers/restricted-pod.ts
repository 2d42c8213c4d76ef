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

/**
 * A WORKFLOW.md whose after_create hook prints what a run Pod's hooks are allowed, one
 * `key=value` a line: `uid=… groups=…`; the kernel's capability sets, no_new_privs and seccomp
 * mode (`capeff`, `capprm`, `capbnd`, `nonewprivs`, `seccomp`); whether the root directory is
 * writable (`rootdir=writable|refused`); whether an API token is mounted
 * (`token=present|absent`). `afterCreate` adds lines to that hook, `beforeRun` is the next hook.
 */
export const securityProbeWorkflow = (more: { afterCreate?: string; beforeRun?: string } = {}) =>
  `---
hooks:
  after_create: |
    printf 'uid=%s groups=%s\\n' "$(id -u)" "$(id -G | tr ' ' ,)"
    awk '/^(CapEff|CapPrm|CapBnd|NoNewPrivs|Seccomp):/ { print tolower($1) "=" $2 }' /proc/self/status | tr -d :
    if touch /root-dir-probe 2>/dev/null; then state=writable; else state=refused; fi
    printf 'rootdir=%s\\n' "$state"
    if [ -e /var/run/secrets/kubernetes.io/serviceaccount/token ]; then state=present; else state=absent; fi
    printf 'token=%s\\n' "$state"
${more.afterCreate ? `    ${more.afterCreate}\n` : ''}  before_run: ${more.beforeRun ?? "'true'"}
  after_run: 'true'
  before_remove: 'true'
---
Work on {{ issue.identifier }}.
`;
