// Tokens by Workflow and day, and runs with their failure ratio over time (uPlot), each with
// the same numbers as a table for those who do not read charts.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { UsageReport } from '../../../src/server/view-api.js';
import { errorText, getJson } from '../api.js';
import { navigate } from '../router.js';
import { apiQuery, usageUrl, type UsageFilters } from '../route.js';
import { displayText, formatCount } from '../text.js';
import { usageSeries } from '../usage.js';

// The x scale is fixed to the data's days with half a day either side: one day of data still
// gets a readable axis (uPlot's automatic range for a single point spans years).
function dayScale(days: number[]): uPlot.Scale {
  const first = days[0] ?? Date.now() / 1000;
  const last = days[days.length - 1] ?? first;
  return { time: true, auto: false, range: [first - 43_200, last + 43_200] };
}
const FROM_ZERO: uPlot.Scale = { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] };

const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#4b5563'];

function Chart({
  options,
  data,
  label,
}: {
  options: Omit<uPlot.Options, 'width' | 'height'>;
  data: uPlot.AlignedData;
  label: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const plot = new uPlot(
      { ...options, width: Math.max(320, el.clientWidth), height: 280 },
      data,
      el,
    );
    const resize = (): void => plot.setSize({ width: Math.max(320, el.clientWidth), height: 280 });
    window.addEventListener('resize', resize);
    return () => {
      window.removeEventListener('resize', resize);
      plot.destroy();
    };
  }, [options, data]);
  return <div ref={box} class="chart" role="img" aria-label={label} />;
}

const defaultFrom = (): string => new Date(Date.now() - 30 * 86_400_000).toISOString().slice(0, 10);

export function Usage({ filters }: { filters: UsageFilters }) {
  const [report, setReport] = useState<UsageReport>();
  const [error, setError] = useState<string>();
  const [draft, setDraft] = useState(filters);
  const filterKey = JSON.stringify(filters);
  useEffect(() => {
    setDraft(filters);
    const controller = new AbortController();
    const query = { ...filters, from: filters.from ?? defaultFrom() };
    getJson<UsageReport>(`/api/v1/usage${apiQuery(query)}`, controller.signal).then(
      (r) => {
        setReport(r);
        setError(undefined);
      },
      (err: unknown) => {
        if (!controller.signal.aborted) setError(errorText(err));
      },
    );
    return () => controller.abort();
  }, [filterKey]);

  const series = useMemo(() => usageSeries(report?.rows ?? []), [report]);
  const tokenChart = useMemo(
    () => ({
      options: {
        title: 'Tokens by Workflow and day',
        scales: { x: dayScale(series.days), y: FROM_ZERO },
        series: [
          {},
          ...series.tokens.map((t, i) => ({
            label: t.label,
            stroke: COLORS[i % COLORS.length] ?? '#000',
            width: 2,
          })),
        ],
        axes: [{}, { size: 70, values: (_u: uPlot, ticks: number[]) => ticks.map(formatCount) }],
      },
      data: [series.days, ...series.tokens.map((t) => t.values)] as uPlot.AlignedData,
    }),
    [series],
  );
  const runChart = useMemo(
    () => ({
      options: {
        title: 'Runs and failure ratio by day',
        scales: {
          x: dayScale(series.days),
          y: FROM_ZERO,
          ratio: { range: [0, 1] as [number, number] },
        },
        series: [
          {},
          { label: 'runs', stroke: '#2563eb', width: 2 },
          { label: 'failed', stroke: '#dc2626', width: 2 },
          { label: 'failure ratio', stroke: '#9333ea', width: 2, dash: [6, 4], scale: 'ratio' },
        ],
        axes: [{}, {}, { scale: 'ratio', side: 1, grid: { show: false } }],
      },
      data: [series.days, series.runs, series.failed, series.failureRatio] as uPlot.AlignedData,
    }),
    [series],
  );

  return (
    <main>
      <h1>Usage</h1>
      <form
        class="filters"
        aria-label="Filter usage"
        onSubmit={(event) => {
          event.preventDefault();
          navigate(usageUrl(draft));
        }}
      >
        {(['namespace', 'workflow', 'from', 'to'] as const).map((key) => (
          <label key={key}>
            {key === 'from'
              ? 'From (YYYY-MM-DD)'
              : key === 'to'
                ? 'To (YYYY-MM-DD)'
                : key[0]?.toUpperCase() + key.slice(1)}
            <input
              name={key}
              value={draft[key] ?? ''}
              onInput={(event) => setDraft({ ...draft, [key]: event.currentTarget.value.trim() })}
            />
          </label>
        ))}
        <button type="submit">Show usage</button>
      </form>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {report && report.rows.length === 0 && <p>No usage in this range.</p>}
      {report && report.rows.length > 0 && (
        <>
          <Chart {...tokenChart} label="Chart of tokens by Workflow and day" />
          <Chart {...runChart} label="Chart of runs, failed runs and failure ratio by day" />
          <details>
            <summary>The numbers as a table</summary>
            <table class="usage" aria-label="Usage by Workflow and day">
              <thead>
                <tr>
                  <th scope="col">Day</th>
                  <th scope="col">Workflow</th>
                  <th scope="col">Runs</th>
                  <th scope="col">Failed</th>
                  <th scope="col">Input tokens</th>
                  <th scope="col">Output tokens</th>
                  <th scope="col">Total tokens</th>
                </tr>
              </thead>
              <tbody>
                {report.rows.map((r, i) => (
                  <tr key={i}>
                    <td>{r.day}</td>
                    <td>
                      {displayText(r.namespace)}/{displayText(r.workflow)}
                    </td>
                    <td>{r.runs}</td>
                    <td>{r.failed}</td>
                    <td>{r.inputTokens}</td>
                    <td>{r.outputTokens}</td>
                    <td>{r.totalTokens}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </details>
        </>
      )}
    </main>
  );
}
