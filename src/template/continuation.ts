/**
 * The fixed message of every turn after the first while the issue stays active. Not Liquid and not
 * configurable: the text is Lorenz's, word for word (docs/design.md#templates), ending with its
 * newline.
 */
export function continuationPrompt(turnNumber: number, maxTurns: number): string {
  return [
    'Continuation guidance:',
    '',
    '- The previous agent turn completed normally, but the issue is still in an active state.',
    `- This is continuation turn #${turnNumber} of ${maxTurns} for the current agent run.`,
    '- Resume from the current workspace and workpad state instead of restarting from scratch.',
    '- The original task instructions and prior turn context are already present in this thread, so do not restate them before acting.',
    '- Focus on the remaining ticket work and do not end the turn while the issue stays active unless you are truly blocked.',
    '',
  ].join('\n');
}
