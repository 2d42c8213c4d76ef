/** The `ensemble` object of the prompt context (snake_case, as templates spell it). */
export interface EnsembleContext {
  enabled: boolean;
  slot_index: number;
  size: number;
}

/** A solo run: not an ensemble, slot 0 of 1. */
export function soloEnsemble(): EnsembleContext {
  return { enabled: false, slot_index: 0, size: 1 };
}

/** Slot `slot` (0-based) of an ensemble of `size`; a size of 1 is a solo run. */
export function ensembleContext(slot: number, size: number): EnsembleContext {
  return { enabled: size > 1, slot_index: slot, size };
}
