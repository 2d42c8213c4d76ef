import type { V1Container, V1EnvFromSource, V1EnvVar } from '@kubernetes/client-node';
import { REDACT_ENV_PREFIX } from '../../api/run-pod.js';

// The agent container's environment: the Pod template's, with HOME defaulted and, when
// secret output is redacted, each Secret-sourced value once more under REDACT_ENV_PREFIX so
// the runner knows which values to mask in what hooks print.

export function agentEnv(template: V1Container, redactSecrets: boolean): V1EnvVar[] {
  const env = [...(template.env ?? [])];
  if (!env.some((variable) => variable.name === 'HOME')) env.push({ name: 'HOME', value: '/tmp' });
  if (!redactSecrets) return env;
  // Each Secret-sourced variable once more under the redaction prefix (see REDACT_ENV_PREFIX).
  (template.env ?? []).forEach((variable, index) => {
    if (variable.valueFrom?.secretKeyRef) {
      env.push({ name: `${REDACT_ENV_PREFIX}${index}`, valueFrom: variable.valueFrom });
    }
  });
  return env;
}

/** The template's envFrom, plus each Secret once more under the redaction prefix. */
export function agentEnvFrom(
  template: V1Container,
  redactSecrets: boolean,
): V1EnvFromSource[] | undefined {
  const sources = template.envFrom ?? [];
  const copies = redactSecrets
    ? sources.flatMap((source, index) =>
        source.secretRef
          ? [
              {
                prefix: `${REDACT_ENV_PREFIX}FROM${index}_`,
                secretRef: { ...source.secretRef, optional: true },
              },
            ]
          : [],
      )
    : [];
  const all = [...sources, ...copies];
  return all.length > 0 ? all : undefined;
}
