import { parseDocument, YAMLParseError } from 'yaml';

/**
 * YAML from users (WORKFLOW.md front matter, issue files, spec.issue) is parsed here, one way
 * for all of them: duplicate keys are errors, warnings are not printed by the library, and
 * alias expansion is bounded so that a "billion laughs" document fails fast instead of
 * filling memory. Every failure becomes a YamlProblem; nothing the library throws escapes.
 */

/** The most alias expansions one document may make (the library's own default, pinned). */
export const MAX_ALIAS_COUNT = 100;

export interface YamlProblem {
  /** 1-based position in the text given, when the library knows it. */
  line: number | null;
  column: number | null;
  reason: string;
  /** The library's error code, or ours for failures found while converting to values. */
  yamlCode: string;
}

export type YamlResult =
  | { ok: true; /** nothing but comments or blank lines */ empty: boolean; value: unknown }
  | { ok: false; problem: YamlProblem };

/** `Unresolved alias (…): x` and the alias-count message, in the terms of the document. */
function conversionProblem(error: unknown): YamlProblem | null {
  if (!(error instanceof ReferenceError)) return null;
  const unresolved = /^Unresolved alias[^:]*: (.*)$/.exec(error.message);
  if (unresolved) {
    return {
      line: null,
      column: null,
      reason: `alias *${unresolved[1]} refers to no anchor &${unresolved[1]} before it`,
      yamlCode: 'UNRESOLVED_ALIAS',
    };
  }
  if (/alias count/i.test(error.message)) {
    return {
      line: null,
      column: null,
      reason: `aliases expand more than ${MAX_ALIAS_COUNT} times (an alias bomb?)`,
      yamlCode: 'ALIAS_LIMIT',
    };
  }
  return null;
}

function parseProblem(error: YAMLParseError): YamlProblem {
  const position = error.linePos?.[0];
  return {
    line: position?.line ?? null,
    column: position?.col ?? null,
    // The library appends the position and an excerpt; the caller places the position.
    reason: error.message.split(/ at line \d+, column \d+/)[0]?.trim() ?? error.message,
    yamlCode: error.code,
  };
}

export function parseUserYaml(text: string): YamlResult {
  try {
    const document = parseDocument(text, { logLevel: 'silent', uniqueKeys: true });
    const [error] = document.errors;
    if (error) return { ok: false, problem: parseProblem(error) };
    const value: unknown = document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    return { ok: true, empty: document.contents === null, value };
  } catch (error) {
    if (error instanceof YAMLParseError) return { ok: false, problem: parseProblem(error) };
    const problem = conversionProblem(error);
    if (problem === null) throw error;
    return { ok: false, problem };
  }
}
