// One run: its header, the timeline, the transcript (followed live while the run runs),
// each hook's output, Events, token usage, the cancel and retry actions, and what the agent
// waits on (approve, deny, answer) with the decisions made.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { RunDetail, TranscriptEntry } from '../../../src/server/view-api.js';
import { errorText, getJson, streamErrorText, streamEvents } from '../api.js';
import { ActionButton } from '../components/Confirm.js';
import { Inbox } from '../components/Inbox.js';
import { Timeline } from '../components/Timeline.js';
import { HookOutput, Transcript } from '../components/Transcript.js';
import { Clipped, ExternalLink, Phase } from '../components/Text.js';
import { navigate } from '../router.js';
import { apiQuery, runUrl } from '../route.js';
import { displayText, formatCount, formatDuration, formatTime } from '../text.js';
import { useWatch } from '../watch.js';

const finished = (phase: string): boolean => phase === 'Succeeded' || phase === 'Failed';

export function Run({ namespace, name, uid }: { namespace: string; name: string; uid?: string }) {
  const base = `/api/v1/namespaces/${encodeURIComponent(namespace)}/runs/${encodeURIComponent(name)}`;
  const [detail, setDetail] = useState<RunDetail>();
  const [error, setError] = useState<string>();
  const [tick, setTick] = useState(0);
  const pending = useRef<number | undefined>(undefined);

  useEffect(() => {
    const controller = new AbortController();
    getJson<RunDetail>(`${base}${apiQuery({ uid })}`, controller.signal).then(
      (d) => {
        setDetail(d);
        setError(undefined);
      },
      (err: unknown) => {
        if (!controller.signal.aborted) setError(errorText(err));
      },
    );
    return () => controller.abort();
  }, [base, uid, tick]);

  // A change of this run (from the watch) reloads its detail, at most twice a second.
  useWatch(namespace, (change) => {
    if (change.event !== 'run' || change.data.name !== name || change.data.namespace !== namespace)
      return;
    if (uid && change.data.uid !== uid) return;
    setDetail((d) => d && { ...d, run: change.data });
    if (pending.current === undefined)
      pending.current = window.setTimeout(() => {
        pending.current = undefined;
        setTick((t) => t + 1);
      }, 500);
  });
  useEffect(() => () => window.clearTimeout(pending.current), []);

  const running = detail !== undefined && !finished(detail.run.phase);
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!running) return;
    const timer = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(timer);
  }, [running]);

  if (error && !detail)
    return (
      <main>
        <h1>
          Run {displayText(namespace)}/{displayText(name)}
        </h1>
        <p role="alert" class="error">
          {error}
        </p>
      </main>
    );
  if (!detail)
    return (
      <main>
        <p class="muted">Loading…</p>
      </main>
    );
  const { run } = detail;
  const runUid = run.uid;
  // A hook's seq counts hook runs within one Pod's log: slot and attempt say which Pod.
  const hookPath = (seq: number, slot: number, attempt: number): string =>
    `${base}/hooks/${seq}/output${apiQuery({ uid: runUid, slot, attempt })}`;
  const pushed = detail.attempts.flatMap((a) => a.git?.pushedCommits ?? []);
  const where = [
    ...new Set(detail.attempts.flatMap((a) => [a.node, a.host].filter((x): x is string => !!x))),
  ];
  return (
    <main>
      <h1>
        Run {displayText(run.namespace)}/{displayText(run.name)} <Phase phase={run.phase} />
      </h1>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <dl class="header">
        <dt>Issue</dt>
        <dd>
          <ExternalLink url={run.issue.url}>{displayText(run.issue.identifier)}</ExternalLink>{' '}
          <Clipped text={run.issue.title} />
          {run.issue.state && <span class="muted"> ({displayText(run.issue.state)})</span>}
        </dd>
        <dt>Workflow</dt>
        <dd>{displayText(run.workflow)}</dd>
        <dt>Phase</dt>
        <dd>
          {displayText(run.phase)}
          {run.reason && <> — {displayText(run.reason)}</>}
          {run.cancelRequested && ' (cancel requested)'}
        </dd>
        {run.message && (
          <>
            <dt>Message</dt>
            <dd>
              <Clipped text={run.message} />
            </dd>
          </>
        )}
        <dt>Attempt</dt>
        <dd>{run.attempt}</dd>
        <dt>Branch</dt>
        <dd>{run.branch ? displayText(run.branch) : '–'}</dd>
        <dt>Workspace</dt>
        <dd>{run.workspace ? displayText(run.workspace) : '–'}</dd>
        <dt>Pushed commits</dt>
        <dd>{pushed.length ? pushed.map((c) => <code key={c}>{displayText(c)} </code>) : '–'}</dd>
        <dt>Node / host</dt>
        <dd>{where.length ? where.map(displayText).join(', ') : '–'}</dd>
        <dt>Created / started / finished</dt>
        <dd>
          {formatTime(run.createdAt)} / {formatTime(run.startedAt)} / {formatTime(run.finishedAt)}
        </dd>
        <dt>Source</dt>
        <dd>
          <span class={`source source-${run.source}`}>{run.source}</span>
          {run.deletedAt && <> (deleted {formatTime(run.deletedAt)})</>}
        </dd>
        <dt>Tokens</dt>
        <dd>
          {formatCount(run.usage.totalTokens)} total ({formatCount(run.usage.inputTokens)} in,{' '}
          {formatCount(run.usage.outputTokens)} out)
        </dd>
      </dl>
      <div class="actions">
        <ActionButton
          spec={{
            label: 'Cancel run',
            question: `Cancel run ${run.namespace}/${run.name}? Its Pod is stopped; after_run still runs.`,
            path: `${base}/cancel`,
            disabled: run.source !== 'live' || finished(run.phase) || run.cancelRequested === true,
            onDone: () => setTick((t) => t + 1),
          }}
        />
        <ActionButton
          spec={{
            label: 'Retry run',
            question: `Retry run ${run.namespace}/${run.name}?`,
            path: `${base}/retry`,
            disabled: run.source !== 'live' || run.phase !== 'Failed',
            // A retry is a new run (`<name>-retry-<attempt>`): its page is where to look.
            onDone: (result) => navigate(runUrl(result.namespace, result.name)),
          }}
        />
      </div>

      {detail.inbox && (
        <>
          <h2>
            Waiting for a person
            {detail.inbox.pending.length > 0 && ` (${detail.inbox.pending.length})`}
          </h2>
          <Inbox
            inbox={detail.inbox}
            decidePath={`${base}/decide`}
            live={run.source === 'live' && !finished(run.phase)}
            onDone={() => setTick((t) => t + 1)}
          />
        </>
      )}

      <h2>Timeline</h2>
      <Timeline bars={detail.timeline} now={now} />

      <h2>Transcript</h2>
      <TranscriptSection
        base={base}
        uid={runUid}
        follow={!finished(run.phase) && run.source === 'live'}
        hookPath={hookPath}
      />

      <h2>Attempts and hooks</h2>
      {detail.attempts.length === 0 && <p class="muted">No attempt started yet.</p>}
      {detail.attempts.map((a) => (
        <section
          key={`${a.slot}-${a.attempt}`}
          class="attempt"
          aria-label={`Slot ${a.slot} attempt ${a.attempt}`}
        >
          <h3>
            Slot {a.slot}, attempt {a.attempt}: {displayText(a.phase)}
            {a.reason && <> — {displayText(a.reason)}</>}
          </h3>
          <p class="muted">
            Pod {displayText(a.podName)}
            {a.node && <>, node {displayText(a.node)}</>}
            {a.host && <>, host {displayText(a.host)}</>}, {a.turns} turns,{' '}
            {formatCount(a.usage.totalTokens)} tokens
          </p>
          {a.hooks.length > 0 && (
            <ul class="hooks">
              {a.hooks.map((h, i) => (
                <li key={i}>
                  <strong>{displayText(h.hookName)}</strong> {displayText(h.status)}
                  {h.exitCode !== undefined && ` (exit ${h.exitCode})`}
                  {h.durationMs !== undefined && `, ${formatDuration(h.durationMs)}`}
                  {h.seq !== undefined ? (
                    <HookOutput
                      path={hookPath(h.seq, a.slot, a.attempt)}
                      hookName={h.hookName}
                      {...(h.output !== undefined ? { preview: h.output } : {})}
                    />
                  ) : (
                    h.output && <Clipped text={h.output} block />
                  )}
                </li>
              ))}
            </ul>
          )}
        </section>
      ))}

      <h2>Events</h2>
      {detail.events.length === 0 ? (
        <p class="muted">No Events.</p>
      ) : (
        <div class="scroll">
          <table class="events" aria-label="Events">
            <thead>
              <tr>
                <th scope="col">Type</th>
                <th scope="col">Reason</th>
                <th scope="col">Object</th>
                <th scope="col">Message</th>
                <th scope="col">Count</th>
                <th scope="col">Last</th>
              </tr>
            </thead>
            <tbody>
              {detail.events.map((e, i) => (
                <tr key={i}>
                  <td>{displayText(e.type)}</td>
                  <td>{displayText(e.reason)}</td>
                  <td>
                    {displayText(e.involvedKind)}/{displayText(e.involvedName)}
                  </td>
                  <td class="clip">
                    <Clipped text={e.message} />
                  </td>
                  <td>{e.count}</td>
                  <td>{formatTime(e.lastTime ?? e.firstTime)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </main>
  );
}

function TranscriptSection({
  base,
  uid,
  follow,
  hookPath,
}: {
  base: string;
  uid: string;
  follow: boolean;
  hookPath: (seq: number, slot: number, attempt: number) => string;
}) {
  const [entries, setEntries] = useState<TranscriptEntry[]>([]);
  const [state, setState] = useState<'loading' | 'live' | 'done' | 'error'>('loading');
  const [error, setError] = useState<string>();
  useEffect(() => {
    const controller = new AbortController();
    const bySeq = new Map<number, TranscriptEntry>();
    let flush: number | undefined;
    // Entries arrive one event each: render them in batches, not one render per entry.
    const schedule = (): void => {
      flush ??= window.setTimeout(() => {
        flush = undefined;
        setEntries([...bySeq.values()].sort((a, b) => a.seq - b.seq));
      }, 50);
    };
    setEntries([]);
    setState('loading');
    streamEvents(
      `${base}/transcript${apiQuery({ uid, follow: follow ? 'true' : undefined })}`,
      {
        onOpen: () => setState(follow ? 'live' : 'loading'),
        onClose: () => setState((s) => (s === 'error' ? s : 'done')),
        onError: (err) => {
          setError(errorText(err));
          setState('error');
        },
        onMessage: (message) => {
          if (message.event === 'entry') {
            try {
              const entry = JSON.parse(message.data) as TranscriptEntry;
              bySeq.set(entry.seq, entry);
              schedule();
            } catch {
              // A malformed entry is skipped; the rest of the transcript still shows.
            }
          } else if (message.event === 'end') {
            setState('done');
          } else if (message.event === 'error') {
            setError(streamErrorText(message.data));
            setState('error');
          }
        },
      },
      controller.signal,
      {
        until: (message) => message.event === 'end' || message.event === 'error',
        // A finished run's transcript ends after its last entry; a running one is followed
        // again after a broken connection (entries come again from the start, kept by seq).
        reconnect: follow,
      },
    );
    return () => {
      controller.abort();
      window.clearTimeout(flush);
    };
  }, [base, uid, follow]);
  return (
    <section aria-label="Transcript section">
      <p class="muted" role="status">
        {state === 'live'
          ? `Following live: ${entries.length} entries`
          : state === 'done'
            ? `${entries.length} entries`
            : state === 'loading'
              ? 'Loading…'
              : ''}
      </p>
      {error && (
        <p role="alert" class="error">
          {displayText(error)}
        </p>
      )}
      <Transcript entries={entries} hookPath={hookPath} />
    </section>
  );
}
