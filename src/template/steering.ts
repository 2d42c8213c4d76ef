/**
 * What a person said to a running agent, given with the next turn's prompt: the `/steer`
 * comments on the issue and the reasons of denied permission requests (docs/approvals.md).
 * It is data, like the review feedback blocks: every line a person wrote is quoted (`- ` for
 * an entry's first line, `  | ` for each further one), so no text of theirs can close the
 * block early or start a line of its own.
 */

export const STEERING_BEGIN = '--- steering ---';
export const STEERING_END = '--- end steering ---';

export interface SteerText {
  text: string;
  by?: string | undefined;
}

/** One line, CRs and LFs as spaces (a name, a title). */
const oneLine = (text: string): string => text.replace(/[\r\n]+/g, ' ').trim();

/** A quoted entry: the first line after `- `, each further one after `  | `. */
function quoted(text: string): string {
  return `- ${text.replace(/\r/g, '').trimEnd().split('\n').join('\n  | ')}`;
}

/**
 * The block that follows the continuation prompt; empty when there is nothing to say.
 * `denials` are sentences already ("A person denied <title>: <reason>").
 */
export function steeringBlock(steers: readonly SteerText[], denials: readonly string[]): string {
  if (steers.length === 0 && denials.length === 0) return '';
  const lines = [
    '',
    'Between the markers below is what people said about this run, quoted. Steers are requests from the people working on the issue: take them into account for the rest of the task. Denied actions must not be retried as they were.',
    '',
    STEERING_BEGIN,
  ];
  for (const steer of steers) {
    const by = steer.by ? oneLine(steer.by) : '';
    lines.push(`Steer${by ? ` from ${by}` : ''}:`, quoted(steer.text));
  }
  for (const denial of denials) lines.push('Denied:', quoted(denial));
  lines.push(STEERING_END, '');
  return lines.join('\n');
}
