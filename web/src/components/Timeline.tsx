// The run's timeline as SVG bars, one row per bar in start order: where the time went, at a
// glance. Each bar is focusable; hover or focus names it and its duration below the chart.
import { useState } from 'preact/hooks';
import type { TimelineBar } from '../../../src/server/view-api.js';
import { displayText, formatDuration } from '../text.js';

const ROW = 16;
const LABEL = 180;
const WIDTH = 900;
/** More rows than this and the chart says how many it left out rather than growing on. */
const MAX_ROWS = 400;

const DEPTH: Record<TimelineBar['kind'], number> = {
  attempt: 0,
  hook: 1,
  git: 1,
  turn: 1,
  tool_call: 2,
};

export function Timeline({ bars, now }: { bars: TimelineBar[]; now: number }) {
  const [focused, setFocused] = useState<string>();
  if (bars.length === 0) return <p class="muted">No timeline yet.</p>;
  const spans = bars.map((bar) => {
    const start = Date.parse(bar.startedAt);
    const end = bar.finishedAt ? Date.parse(bar.finishedAt) : now;
    return { bar, start, end: Math.max(end, start) };
  });
  const valid = spans.filter((s) => !Number.isNaN(s.start));
  valid.sort((a, b) => a.start - b.start || DEPTH[a.bar.kind] - DEPTH[b.bar.kind]);
  const shown = valid.slice(0, MAX_ROWS);
  const t0 = Math.min(...shown.map((s) => s.start));
  const t1 = Math.max(t0 + 1, ...shown.map((s) => s.end));
  const scale = (WIDTH - LABEL - 10) / (t1 - t0);
  const height = shown.length * ROW + 20;
  return (
    <figure class="timeline">
      <svg
        viewBox={`0 0 ${WIDTH} ${height}`}
        width="100%"
        role="group"
        aria-label={`Timeline: ${shown.length} bars over ${formatDuration(t1 - t0)}`}
      >
        {shown.map(({ bar, start, end }, i) => {
          const label = displayText(bar.label);
          const text = `${bar.kind.replace('_', ' ')} ${label} (slot ${bar.slot}, attempt ${bar.attempt}): ${formatDuration(end - start)}${bar.finishedAt ? '' : ', running'} — ${bar.status}`;
          const x = LABEL + (start - t0) * scale;
          const y = i * ROW;
          return (
            <g
              key={i}
              class={`bar bar-${bar.kind} bar-${bar.status}`}
              tabIndex={0}
              role="img"
              aria-label={text}
              onMouseEnter={() => setFocused(text)}
              onFocus={() => setFocused(text)}
            >
              <title>{text}</title>
              <text x={4 + DEPTH[bar.kind] * 10} y={y + 12} class="bar-label">
                {label.length > 28 ? `${label.slice(0, 27)}…` : label}
              </text>
              <rect
                x={x}
                y={y + 2}
                width={Math.max(2, (end - start) * scale)}
                height={ROW - 4}
                rx={2}
              />
            </g>
          );
        })}
        <text x={LABEL} y={height - 4} class="axis">
          0
        </text>
        <text x={WIDTH - 10} y={height - 4} class="axis" text-anchor="end">
          {formatDuration(t1 - t0)}
        </text>
      </svg>
      <figcaption aria-live="polite">
        {focused ?? 'Hover or focus a bar for its name and duration.'}
        {valid.length > shown.length && ` (${valid.length - shown.length} later bars not drawn)`}
      </figcaption>
    </figure>
  );
}
