/**
 * "Is this issue still active?": in one of tracker.active_states and in none of
 * tracker.terminal_states, compared trimmed and case-insensitively. The turn loop asks it
 * before each continuation turn, wherever it runs (`lorenz run`, the runner in a Pod).
 */
export function isActiveState(
  state: string | null,
  tracker: { activeStates: readonly string[]; terminalStates: readonly string[] },
): boolean {
  if (state === null || state.trim() === '') return false;
  const key = state.trim().toLowerCase();
  const among = (states: readonly string[]) =>
    states.some((candidate) => candidate.trim().toLowerCase() === key);
  return among(tracker.activeStates) && !among(tracker.terminalStates);
}
