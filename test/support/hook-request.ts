// The HookRequest a unit test hands to runHook, built in one place: the issue's workspace in a
// temp dir, a login shell that starts fast, and every event kept for the test to read.
import { basename } from 'node:path';
import type { Executor } from '../../src/executor/types.js';
import type { HookRequest } from '../../src/workspace/hooks.js';
import type { HookExecutionMessage, HookName, LorenzEvent } from '../../src/workflow/events.js';
import { normalizeIssue } from '../../src/workflow/issue.js';
import { quickLoginEnv, type IssueWorkspace } from './workspace.js';

/**
 * A request to run `command` as `hookName` in `place.workspace` for an issue named after that
 * folder; `overrides` replace any field (the issue, the timeout, the sink...).
 */
export function hookRequest(
  executor: Executor,
  place: IssueWorkspace,
  hookName: HookName,
  command: string | null,
  overrides: Partial<HookRequest> = {},
): { events: LorenzEvent[]; request: HookRequest } {
  const events: LorenzEvent[] = [];
  return {
    events,
    request: {
      executor,
      emit: (event) => events.push(event),
      hookName,
      command,
      workspace: place.workspace,
      root: place.root,
      issue: normalizeIssue({ identifier: basename(place.workspace), title: 't' }),
      timeoutMs: 10_000,
      slot: 0,
      env: quickLoginEnv(place.base),
      ...overrides,
    },
  };
}

/** The hook_execution messages among `events`, in order. */
export function hookMessages(events: LorenzEvent[]): HookExecutionMessage[] {
  return events.flatMap((event) => (event.type === 'hook_execution' ? [event.message] : []));
}
