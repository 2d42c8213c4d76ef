/** JQL for the adapter's searches: the project scope, the states, the optional extra clause. */

/** A JQL string literal: double quotes, with `"` and `\` escaped. */
export function jqlString(value: string): string {
  return `"${value.replace(/["\\]/g, (char) => `\\${char}`)}"`;
}

/**
 * Issues of the project in any of `states`, narrowed by the user's clause (in parentheses,
 * so an OR in it cannot widen the scope). Ordered by key so that pages stay put while an
 * issue is edited mid-poll.
 */
export function statesJql(projectKey: string, states: readonly string[], extra: string | null) {
  const clauses = [
    `project = ${jqlString(projectKey)}`,
    `status in (${states.map(jqlString).join(', ')})`,
    ...(extra === null ? [] : [`(${extra})`]),
  ];
  return `${clauses.join(' AND ')} ORDER BY key ASC`;
}
