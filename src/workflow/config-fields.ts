import { z } from 'zod';

/**
 * Field validators for the WORKFLOW.md front matter. Each carries one rule sentence so that
 * an invalid value is reported as `<key path>: <rule>` whatever zod found wrong with it.
 */

export const MAX_HOOK_TIMEOUT_MS = 604_800_000;

/**
 * The longest delay a Node timer holds (2³¹−1 ms, about 24.8 days): a longer one fires after
 * 1 ms. Every duration in milliseconds is bounded by it.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** A positive duration in milliseconds that a timer can hold. */
export const durationMs = () => positiveInteger(MAX_TIMER_MS);

/** Integer text as YAML leaves it when quoted: `"5"`, ` "-1" `; no decimals, no exponents. */
const INTEGER_TEXT = /^\s*[+-]?\d+\s*$/;

/**
 * Lorenz reads a quoted integer (`max_turns: "5"`) as the number
 * (docs/design.md#kept-to-the-letter). Only integer text is converted; anything else reaches the
 * number schema as it is and fails with its rule. A preprocess (not a union) so that the documented
 * input type stays the number's: the JSON schema of a preprocess in input mode is its output
 * schema.
 */
function acceptingIntegerText<T extends z.ZodNumber>(schema: T) {
  return z.preprocess(
    (value) => (typeof value === 'string' && INTEGER_TEXT.test(value) ? Number(value) : value),
    schema,
  );
}

export function integerAtMost(max: number) {
  const rule = `must be an integer no greater than ${max}`;
  return acceptingIntegerText(
    z.number({ error: rule }).int({ error: rule }).max(max, { error: rule }),
  );
}

export function positiveInteger(max?: number) {
  const rule =
    max === undefined
      ? 'must be a positive integer'
      : `must be a positive integer no greater than ${max}`;
  const base = z.number({ error: rule }).int({ error: rule }).positive({ error: rule });
  return acceptingIntegerText(max === undefined ? base : base.max(max, { error: rule }));
}

export function integer() {
  const rule = 'must be an integer';
  return acceptingIntegerText(z.number({ error: rule }).int({ error: rule }));
}

export function integerBetween(min: number, max: number) {
  const rule = `must be an integer from ${min} to ${max}`;
  return acceptingIntegerText(
    z
      .number({ error: rule })
      .int({ error: rule })
      .min(min, { error: rule })
      .max(max, { error: rule }),
  );
}

export function nonEmptyString() {
  const rule = 'must be a non-empty string';
  return z.string({ error: rule }).trim().min(1, { error: rule });
}

export function nullableString() {
  return z.string({ error: 'must be a string or null' }).nullable();
}

export function stringList() {
  return z.array(z.string({ error: 'must be a string' }), { error: 'must be a list of strings' });
}

/** A hook command: a blank string means "no hook", like null. */
export function hookCommand() {
  return z
    .string({ error: 'must be a string or null' })
    .nullable()
    .transform((value) => (value === null || value.trim() === '' ? null : value));
}

/** Environment for a bridge: YAML scalars are written as text (`DEBUG: 1` → "1"). */
export function environment() {
  const rule = 'must be a map of names to strings';
  return z.record(
    z.string(),
    z.union([z.string(), z.number(), z.boolean()], { error: rule }).transform(String),
    { error: rule },
  );
}

export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  const rule = `must be one of ${values.map((value) => JSON.stringify(value)).join(', ')}`;
  return z.enum(values, { error: rule });
}
