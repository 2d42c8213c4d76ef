import type { Issue } from '../workflow/issue.js';

const ENSEMBLE_LABEL = /^ensemble:(\d+)$/;
export const MAX_ENSEMBLE_SIZE = 100;

/**
 * How many slots run this issue: the first valid `ensemble:<n>` label (n in 1..100; labels
 * are already trimmed and lower-cased), else the configured `agent.ensemble_size`.
 */
export function ensembleSize(issue: Pick<Issue, 'labels'>, configured: number): number {
  for (const label of issue.labels) {
    const match = ENSEMBLE_LABEL.exec(label);
    if (!match) continue;
    const size = Number(match[1]);
    if (size >= 1 && size <= MAX_ENSEMBLE_SIZE) return size;
  }
  return configured;
}

/** Slot indexes 0..size-1. */
export function allSlots(size: number): number[] {
  return Array.from({ length: size }, (_, index) => index);
}
