// Named places where the chaos suite (test/chaos) kills the controller at the worst moment:
// `LORENZ_FAILPOINTS="before-pod-create=0.05,before-finished-status=0.1"` makes the process
// SIGKILL itself (no clean-up, no flush, as the OOM killer or a node loss would) with that
// probability each time it passes the point. Unset, as everywhere outside that suite, a
// failpoint is one map lookup.
export const FAILPOINTS = [
  /** An IssueRun's inputs ConfigMap is created (or on its way), its Pod not yet. */
  'before-pod-create',
  /** A run's Pods have ended; the status that says Finished is not written yet. */
  'before-finished-status',
] as const;
export type Failpoint = (typeof FAILPOINTS)[number];

export const FAILPOINTS_ENV = 'LORENZ_FAILPOINTS';

/** `name=probability` pairs, comma-separated; an unknown name or a bad probability throws. */
export function parseFailpoints(text: string | undefined): Map<Failpoint, number> {
  const armed = new Map<Failpoint, number>();
  for (const entry of (text ?? '').split(',').map((part) => part.trim())) {
    if (!entry) continue;
    const [name = '', value = '1'] = entry.split('=');
    const probability = Number(value);
    if (!(FAILPOINTS as readonly string[]).includes(name)) {
      throw new Error(
        `${FAILPOINTS_ENV}: unknown failpoint "${name}" (known: ${FAILPOINTS.join(', ')})`,
      );
    }
    if (!(probability >= 0 && probability <= 1)) {
      throw new Error(`${FAILPOINTS_ENV}: ${name}'s probability must be in [0, 1], got "${value}"`);
    }
    armed.set(name as Failpoint, probability);
  }
  return armed;
}

let armed: Map<Failpoint, number> | undefined;

/** Kills this process with SIGKILL when the failpoint is armed and the dice say so. */
export function failpoint(name: Failpoint): void {
  armed ??= parseFailpoints(process.env[FAILPOINTS_ENV]);
  const probability = armed.get(name);
  if (probability === undefined || Math.random() >= probability) return;
  process.kill(process.pid, 'SIGKILL');
}
