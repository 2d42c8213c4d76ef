/**
 * kubectl's way of printing a span (k8s.io/apimachinery duration.HumanDuration): `45s`,
 * `3m12s`, `2h5m`, `3d4h`, `400d`, `2y5d`: precise while it is short, coarse once it is long.
 */
export function humanDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '<unknown>';
  const seconds = Math.floor(Math.max(ms, 0) / 1000);
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (days < 365 * 2) return `${days}d`;
  const years = Math.floor(days / 365);
  if (years < 8) return days % 365 === 0 ? `${years}y` : `${years}y${days % 365}d`;
  return `${years}y`;
}

/** The span between two RFC 3339 times; undefined when either is missing or unreadable. */
export function spanMs(from: string | undefined, to: string | undefined): number | undefined {
  if (!from || !to) return undefined;
  const ms = Date.parse(to) - Date.parse(from);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Milliseconds as a short figure: `850ms`, `1.2s`, `3m12s`. */
export function shortMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  return humanDuration(ms);
}
