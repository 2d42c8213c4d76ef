import type { acp } from './client.js';

/** Where a denial's reason travels to the agent in a permission response. */
export const REASON_META_KEY = 'lorenz.dev/reason';

/**
 * The allow option to pick: a one-time approval (the least a run needs to go on), or with
 * `always` the agent's allow_always when it offers one.
 */
export function allowOption(
  options: readonly acp.PermissionOption[],
  always = false,
): acp.PermissionOption | undefined {
  const allowing = options.filter((option) => option.kind.startsWith('allow'));
  const preferred = always
    ? (allowing.find((option) => option.kind === 'allow_always') ??
      allowing.find((option) => option.kind === 'allow_once'))
    : allowing.find((option) => option.kind === 'allow_once');
  return preferred ?? allowing[0];
}

export function selected(option: acp.PermissionOption): acp.RequestPermissionResponse {
  return { outcome: { outcome: 'selected', optionId: option.optionId } };
}

/**
 * A rejection: reject_once, else reject_always, else cancelled (an agent that offers no
 * reject option still learns no). The reason goes in `_meta` for agents that read it; the
 * next turn's prompt carries it for those that do not.
 */
export function rejection(
  options: readonly acp.PermissionOption[],
  reason: string | null,
): acp.RequestPermissionResponse {
  const option =
    options.find((each) => each.kind === 'reject_once') ??
    options.find((each) => each.kind === 'reject_always');
  return {
    outcome: option ? { outcome: 'selected', optionId: option.optionId } : { outcome: 'cancelled' },
    ...(reason === null ? {} : { _meta: { [REASON_META_KEY]: reason } }),
  };
}
