// Every Workflow the caller may list: tracker reachability, candidates, running, blocked
// (by what), over the cap, last poll and error, suspended; the last day's failures.
import { useEffect, useState } from 'preact/hooks';
import type { WorkflowList, WorkflowSummary } from '../../../src/server/view-api.js';
import { errorText, getJson } from '../api.js';
import { ActionButton } from '../components/Confirm.js';
import { Clipped, Link } from '../components/Text.js';
import { runsUrl } from '../route.js';
import { displayText, formatTime } from '../text.js';
import { useWatch, WatchBadge } from '../watch.js';
import { RunTable } from './Runs.js';

const key = (w: { namespace: string; name: string }): string => `${w.namespace}/${w.name}`;

export function Overview() {
  const [list, setList] = useState<WorkflowList>();
  const [error, setError] = useState<string>();
  const [reload, setReload] = useState(0);
  useEffect(() => {
    const controller = new AbortController();
    getJson<WorkflowList>('/api/v1/workflows', controller.signal).then(
      (l) => {
        setList(l);
        setError(undefined);
      },
      (err: unknown) => {
        if (!controller.signal.aborted) setError(errorText(err));
      },
    );
    return () => controller.abort();
  }, [reload]);
  const watch = useWatch(undefined, (change) => {
    if (change.event === 'workflow') {
      setList((l) => {
        if (!l) return l;
        const others = l.workflows.filter((w) => key(w) !== key(change.data));
        return {
          ...l,
          workflows: [...others, change.data].sort((a, b) => key(a).localeCompare(key(b))),
        };
      });
    } else if (change.event === 'workflow_deleted') {
      setList(
        (l) => l && { ...l, workflows: l.workflows.filter((w) => w.uid !== change.data.uid) },
      );
    } else if (change.event === 'run' && change.data.phase === 'Failed') {
      setList((l) => {
        if (!l) return l;
        const rest = l.recentFailures.filter((r) => r.uid !== change.data.uid);
        return { ...l, recentFailures: [change.data, ...rest].slice(0, 20) };
      });
    }
  });
  return (
    <main>
      <h1>
        Workflows <WatchBadge state={watch} />
      </h1>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {!list && !error && <p class="muted">Loading…</p>}
      {list && list.workflows.length === 0 && <p>No Workflows you may list.</p>}
      {list && list.workflows.length > 0 && (
        <div class="scroll">
          <table class="workflows">
            <caption class="sr-only">Workflows</caption>
            <thead>
              <tr>
                <th scope="col">Workflow</th>
                <th scope="col">Tracker</th>
                <th scope="col">Candidates</th>
                <th scope="col">Running</th>
                <th scope="col">Blocked</th>
                <th scope="col">Over cap</th>
                <th scope="col">Last poll</th>
                <th scope="col">Last error</th>
                <th scope="col">Dispatch</th>
              </tr>
            </thead>
            <tbody>
              {list.workflows.map((w) => (
                <WorkflowRow key={w.uid} workflow={w} onChanged={() => setReload((n) => n + 1)} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2>Recent failures</h2>
      {list && list.recentFailures.length === 0 && <p>No failed runs in the last 24 hours.</p>}
      {list && list.recentFailures.length > 0 && (
        <RunTable runs={list.recentFailures} label="Recent failures" />
      )}
    </main>
  );
}

function WorkflowRow({
  workflow: w,
  onChanged,
}: {
  workflow: WorkflowSummary;
  onChanged: () => void;
}) {
  const reach =
    w.tracker.reachable === undefined
      ? 'not polled yet'
      : w.tracker.reachable
        ? 'reachable'
        : 'unreachable';
  const path = `/api/v1/namespaces/${encodeURIComponent(w.namespace)}/workflows/${encodeURIComponent(w.name)}`;
  return (
    <tr>
      <th scope="row">
        <Link
          href={runsUrl({ namespace: w.namespace, workflow: w.name })}
          label={`Runs of ${w.namespace}/${w.name}`}
        >
          {displayText(w.namespace)}/{displayText(w.name)}
        </Link>
      </th>
      <td>
        {displayText(w.tracker.kind)}
        {w.tracker.project && <> {displayText(w.tracker.project)}</>}{' '}
        <span class={`reach reach-${w.tracker.reachable === false ? 'bad' : 'ok'}`}>{reach}</span>
      </td>
      <td>{w.candidates ?? '–'}</td>
      <td>
        {w.running}
        {w.awaiting ? <div class="muted">{w.awaiting} AwaitingApproval</div> : null}
      </td>
      <td>
        {w.blocked.length === 0
          ? '0'
          : w.blocked.map((b) => (
              <div key={b.reason}>
                {b.count} {displayText(b.reason)}
              </div>
            ))}
      </td>
      <td>{w.overCap ?? '–'}</td>
      <td>{formatTime(w.tracker.lastPollTime)}</td>
      <td class="clip">{w.tracker.lastError ? <Clipped text={w.tracker.lastError} /> : '–'}</td>
      <td>
        {w.suspended ? <strong>suspended</strong> : 'active'}{' '}
        <ActionButton
          spec={
            w.suspended
              ? {
                  label: 'Resume',
                  question: `Resume dispatch of Workflow ${w.namespace}/${w.name}?`,
                  path: `${path}/resume`,
                  target: key(w),
                  onDone: onChanged,
                }
              : {
                  label: 'Suspend',
                  question: `Suspend dispatch of Workflow ${w.namespace}/${w.name}? Running runs go on; no new ones start.`,
                  path: `${path}/suspend`,
                  target: key(w),
                  onDone: onChanged,
                }
          }
        />
      </td>
    </tr>
  );
}
