// The /api/v1/watch stream as a hook: each change event, parsed, to the page that listens.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ChangeEvent } from '../../src/server/view-api.js';
import { streamEvents } from './api.js';
import { apiQuery } from './route.js';

export type WatchState = 'connecting' | 'live' | 'reconnecting';

const EVENTS = new Set(['run', 'run_deleted', 'workflow', 'workflow_deleted', 'heartbeat']);

export function useWatch(
  namespace: string | undefined,
  onChange: (change: ChangeEvent) => void,
): WatchState {
  const [state, setState] = useState<WatchState>('connecting');
  const handler = useRef(onChange);
  handler.current = onChange;
  useEffect(() => {
    const controller = new AbortController();
    setState('connecting');
    streamEvents(
      `/api/v1/watch${apiQuery({ namespace })}`,
      {
        onOpen: () => setState('live'),
        onError: () => setState('reconnecting'),
        onMessage: (message) => {
          if (!EVENTS.has(message.event)) return;
          let data: unknown;
          try {
            data = JSON.parse(message.data);
          } catch {
            return;
          }
          handler.current({ event: message.event, data } as ChangeEvent);
        },
      },
      controller.signal,
    );
    return () => controller.abort();
  }, [namespace]);
  return state;
}

export function WatchBadge({ state }: { state: WatchState }) {
  return (
    <span class={`watch watch-${state}`} role="status" aria-label={`Live updates: ${state}`}>
      {state === 'live' ? '● live' : state === 'connecting' ? '○ connecting' : '○ reconnecting'}
    </span>
  );
}
