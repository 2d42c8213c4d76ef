import { renderHookCommand } from '../template/hook.js';
import type { WorkflowConfig } from '../workflow/config.js';
import { HOOK_NAMES, type HookName } from '../workflow/events.js';

/** Each hook's command as bash will run it for this issue; null when not configured. */
export type RenderedHooks = Record<HookName, string | null>;

export function configuredHook(config: WorkflowConfig, name: HookName): string | null {
  switch (name) {
    case 'after_create':
      return config.hooks.afterCreate;
    case 'before_run':
      return config.hooks.beforeRun;
    case 'after_run':
      return config.hooks.afterRun;
    case 'before_remove':
      return config.hooks.beforeRemove;
  }
}

/**
 * Renders every configured hook for the issue (the controller writes the result into the
 * inputs; the runner renders again and must get the same text). Throws the engine's
 * template errors.
 */
export function renderHooks(
  config: WorkflowConfig,
  issue: Parameters<typeof renderHookCommand>[1],
  renderLimitMs?: number,
): RenderedHooks {
  const rendered = {} as RenderedHooks;
  for (const name of HOOK_NAMES) {
    const command = configuredHook(config, name);
    rendered[name] = command === null ? null : renderHookCommand(command, issue, renderLimitMs);
  }
  return rendered;
}
