/**
 * The CEL rules of the CRDs' `x-kubernetes-validations`, evaluated offline so that `lorenz
 * workflow validate` refuses what admission would. The language is @marcbachmann/cel-js's
 * (a maintained CEL implementation with no dependencies); this file only binds the object
 * as the apiserver does. A rule that does not parse or type-check is a CelSyntaxError: a
 * test compiles every rule of the CRDs, so a rule the library cannot take fails there.
 */
import {
  Environment,
  EvaluationError,
  ParseError,
  TypeError as CelTypeError,
} from '@marcbachmann/cel-js';

export class CelSyntaxError extends Error {
  constructor(rule: string, reason: string) {
    super(`cannot evaluate the CEL rule ${JSON.stringify(rule)}: ${reason}`);
    this.name = 'CelSyntaxError';
  }
}

/** An evaluation that CEL itself would fail (a missing field selected, a type mismatch). */
export class CelRuntimeError extends Error {}

/** A parsed rule: whether it is a transition rule (it reads oldSelf), and its test. */
export interface CelRule {
  transition: boolean;
  /** true: the value passes; throws CelRuntimeError where CEL would fail to evaluate. */
  holds: (self: unknown) => boolean;
}

// dyn: the checker here does not see the CRD schema that types self for the apiserver, but
// it still refuses an undeclared name or an unknown function, as the apiserver would.
const withoutOldSelf = new Environment().registerVariable('self', 'dyn');
const full = withoutOldSelf.clone().registerVariable('oldSelf', 'dyn');

/**
 * JSON's whole numbers as CEL ints (bigint), as the apiserver binds `type: integer` fields:
 * a JS number is a CEL double, which int arithmetic and int-only functions refuse.
 */
function toCel(value: unknown): unknown {
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  if (Array.isArray(value)) return value.map(toCel);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, toCel(item)]));
  }
  return value;
}

/** Parse and type-check a rule once; throws CelSyntaxError for what CEL would not compile. */
export function compileCelRule(rule: string): CelRule {
  let program: ReturnType<Environment['parse']>;
  try {
    program = full.parse(rule);
  } catch (error) {
    if (error instanceof ParseError) throw new CelSyntaxError(rule, error.message);
    throw error;
  }
  const checked = program.check();
  if (!checked.valid) throw new CelSyntaxError(rule, checked.error?.message ?? 'no type');
  if (checked.type !== 'bool' && checked.type !== 'dyn') {
    throw new CelSyntaxError(rule, `it is ${checked.type ?? 'untyped'}, not bool`);
  }
  return {
    // Checked without oldSelf declared, a rule that reads it names an undeclared variable.
    transition: !withoutOldSelf.check(rule).valid,
    holds: (self) => {
      let result: unknown;
      try {
        result = program({ self: toCel(self) });
      } catch (error) {
        if (error instanceof EvaluationError || error instanceof CelTypeError) {
          throw new CelRuntimeError(error.message);
        }
        throw error;
      }
      if (typeof result !== 'boolean') throw new CelRuntimeError(`not a boolean: ${rule}`);
      return result;
    },
  };
}
