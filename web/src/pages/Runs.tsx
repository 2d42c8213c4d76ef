// The runs table: live from /api/v1/runs and /api/v1/watch, filtered by what the URL says,
// with history from the archive ("older" pages). Rows are painted a page at a time, so ten
// thousand runs in memory still paint at once; arrow keys move between rows, Enter opens one.
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { RunList, RunSummary } from '../../../src/server/view-api.js';
import { errorText, getJson } from '../api.js';
import { Link, Phase } from '../components/Text.js';
import { navigate } from '../router.js';
import { apiQuery, RUN_FILTER_KEYS, runsUrl, runUrl, type RunFilters } from '../route.js';
import { displayText, formatCount, formatTime } from '../text.js';
import { useWatch, WatchBadge } from '../watch.js';

const PAGE = 200;
const PHASES = ['Pending', 'Running', 'Succeeded', 'Failed'];

/** Whether a run (from the watch) belongs in a table filtered so. */
export function matches(run: RunSummary, f: RunFilters): boolean {
  if (f.namespace && run.namespace !== f.namespace) return false;
  if (f.workflow && run.workflow !== f.workflow) return false;
  if (f.phase && run.phase !== f.phase) return false;
  if (f.reason && run.reason !== f.reason) return false;
  if (f.source && run.source !== f.source) return false;
  if (f.issue && run.issue.identifier !== f.issue && run.issue.id !== f.issue) return false;
  const created = Date.parse(run.createdAt);
  if (f.since && created < Date.parse(f.since)) return false;
  if (f.until && created > Date.parse(f.until)) return false;
  return true;
}

const newestFirst = (a: RunSummary, b: RunSummary): number =>
  b.createdAt.localeCompare(a.createdAt) || a.name.localeCompare(b.name);

export function Runs({ filters }: { filters: RunFilters }) {
  const [runs, setRuns] = useState<RunSummary[]>([]);
  const [next, setNext] = useState<string>();
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string>();
  const [shown, setShown] = useState(PAGE);
  const filterKey = JSON.stringify(filters);

  useEffect(() => {
    const controller = new AbortController();
    setLoading(true);
    setShown(PAGE);
    getJson<RunList>(`/api/v1/runs${apiQuery({ ...filters, limit: 500 })}`, controller.signal).then(
      (list) => {
        setRuns([...list.runs].sort(newestFirst));
        setNext(list.continue);
        setError(undefined);
        setLoading(false);
      },
      (err: unknown) => {
        if (controller.signal.aborted) return;
        setError(errorText(err));
        setLoading(false);
      },
    );
    return () => controller.abort();
  }, [filterKey]);

  const watch = useWatch(filters.namespace, (change) => {
    if (change.event === 'run') {
      setRuns((list) => {
        const rest = list.filter((r) => r.uid !== change.data.uid);
        if (!matches(change.data, filters)) return rest.length === list.length ? list : rest;
        return [change.data, ...rest].sort(newestFirst);
      });
    } else if (change.event === 'run_deleted') {
      // Gone from the cluster: the archive keeps it, and a reload shows it from there.
      setRuns((list) =>
        list.flatMap((r) =>
          r.uid !== change.data.uid
            ? [r]
            : filters.source === 'live'
              ? []
              : [{ ...r, source: 'archive' as const, deletedAt: new Date().toISOString() }],
        ),
      );
    }
  });

  const older = async (): Promise<void> => {
    if (shown < runs.length) {
      setShown(shown + PAGE);
      return;
    }
    if (!next) return;
    try {
      const list = await getJson<RunList>(
        `/api/v1/runs${apiQuery({ ...filters, limit: 500, continue: next })}`,
      );
      setRuns((have) => {
        const seen = new Set(have.map((r) => r.uid));
        return [...have, ...list.runs.filter((r) => !seen.has(r.uid))];
      });
      setNext(list.continue);
      setShown(shown + PAGE);
    } catch (err) {
      setError(errorText(err));
    }
  };

  return (
    <main>
      <h1>
        Runs <WatchBadge state={watch} />
      </h1>
      <FilterForm filters={filters} />
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {loading ? (
        <p class="muted">Loading…</p>
      ) : (
        <>
          <p class="muted" aria-live="polite">
            {runs.length} runs{next ? ' (more older ones in the archive)' : ''}
            {runs.length > shown ? `, showing the newest ${shown}` : ''}
          </p>
          <RunTable runs={runs.slice(0, shown)} label="Runs" />
          {(shown < runs.length || next) && (
            <button type="button" onClick={() => void older()}>
              Older
            </button>
          )}
        </>
      )}
    </main>
  );
}

function FilterForm({ filters }: { filters: RunFilters }) {
  const [draft, setDraft] = useState<RunFilters>(filters);
  useEffect(() => setDraft(filters), [JSON.stringify(filters)]);
  const field = (key: (typeof RUN_FILTER_KEYS)[number], label: string, placeholder = '') => (
    <label>
      {label}
      <input
        name={key}
        value={draft[key] ?? ''}
        placeholder={placeholder}
        onInput={(event) => setDraft({ ...draft, [key]: event.currentTarget.value.trim() })}
      />
    </label>
  );
  return (
    <form
      class="filters"
      aria-label="Filter runs"
      onSubmit={(event) => {
        event.preventDefault();
        navigate(runsUrl(draft));
      }}
    >
      {field('namespace', 'Namespace')}
      {field('workflow', 'Workflow')}
      <label>
        Phase
        <select
          name="phase"
          aria-label="Phase"
          value={draft.phase ?? ''}
          onChange={(event) => setDraft({ ...draft, phase: event.currentTarget.value })}
        >
          <option value="">any</option>
          {PHASES.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      </label>
      {field('reason', 'Reason')}
      {field('issue', 'Issue', 'ENG-12')}
      {field('since', 'Since', '2026-01-31T00:00:00Z')}
      {field('until', 'Until', '2026-02-01T00:00:00Z')}
      <label>
        Source
        <select
          name="source"
          aria-label="Source"
          value={draft.source ?? ''}
          onChange={(event) => setDraft({ ...draft, source: event.currentTarget.value })}
        >
          <option value="">live and archive</option>
          <option value="live">live</option>
          <option value="archive">archive</option>
        </select>
      </label>
      <button type="submit">Apply filters</button>
      <button type="button" onClick={() => navigate(runsUrl())}>
        Clear
      </button>
    </form>
  );
}

function moveFocus(event: KeyboardEvent): void {
  const row = event.currentTarget as HTMLTableRowElement;
  const target =
    event.key === 'ArrowDown'
      ? row.nextElementSibling
      : event.key === 'ArrowUp'
        ? row.previousElementSibling
        : event.key === 'Home'
          ? row.parentElement?.firstElementChild
          : event.key === 'End'
            ? row.parentElement?.lastElementChild
            : undefined;
  if (target instanceof HTMLElement) {
    event.preventDefault();
    target.focus();
  } else if (event.key === 'Enter' && event.target === row) {
    const href = row.dataset['href'];
    if (href) navigate(href);
  }
}

export function RunTable({ runs, label }: { runs: RunSummary[]; label: string }) {
  const rows = useMemo(
    () =>
      runs.map((run) => {
        const href = runUrl(
          run.namespace,
          run.name,
          run.source === 'archive' ? run.uid : undefined,
        );
        return (
          <tr
            key={run.uid}
            tabIndex={0}
            data-href={href}
            onKeyDown={moveFocus}
            aria-label={`Run ${run.namespace}/${run.name}, ${run.phase}`}
          >
            <td>
              <Link href={href}>
                {displayText(run.namespace)}/{displayText(run.name)}
              </Link>
            </td>
            <td>{displayText(run.workflow)}</td>
            <td class="clip">
              {displayText(run.issue.identifier)}{' '}
              <span class="muted">{displayText(run.issue.title.slice(0, 200))}</span>
            </td>
            <td>
              <Phase phase={run.phase} />
              {run.cancelRequested && <span class="muted"> (cancel requested)</span>}
            </td>
            <td>{displayText(run.reason ?? '')}</td>
            <td>{run.attempt}</td>
            <td>{formatTime(run.createdAt)}</td>
            <td>{formatCount(run.usage.totalTokens)}</td>
            <td>
              <span class={`source source-${run.source}`}>{run.source}</span>
            </td>
          </tr>
        );
      }),
    [runs],
  );
  return (
    <div class="scroll">
      <table class="runs" aria-label={label}>
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Workflow</th>
            <th scope="col">Issue</th>
            <th scope="col">Phase</th>
            <th scope="col">Reason</th>
            <th scope="col">Attempt</th>
            <th scope="col">Created</th>
            <th scope="col">Tokens</th>
            <th scope="col">Source</th>
          </tr>
        </thead>
        <tbody>{rows}</tbody>
      </table>
    </div>
  );
}
