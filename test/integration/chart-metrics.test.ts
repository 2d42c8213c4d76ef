// The chart's Grafana dashboard and run alerts, rendered by the real helm: the dashboard
// ConfigMap for Grafana's sidecar (off by default), the PrometheusRule's run alerts with their
// annotations and runbook anchors in docs/metrics.md, and every metric either reads exported
// by the controller's registry (the runtime's and Lorenz's, as the manager builds it).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ensureTools, type ToolPaths } from '../../hack/cluster/control-plane.js';
import { createRuntimeMetrics } from '../../src/controller/runtime/metrics.js';
import { runMetrics } from '../../src/controller/shared/run-metrics.js';
import { createArchiveMetrics } from '../../src/controller/archive/metrics.js';

const exec = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const chart = join(root, 'charts', 'lorenz');

/**
 * The run archive's metrics the alerts and the dashboard read: the archive controller
 * (src/controller/archive) registers them, on a registry of its own making.
 */
/** Prometheus's own series. */
const PROMETHEUS_SERIES = ['up'];

interface Manifest {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  data?: Record<string, string>;
  spec?: unknown;
}
interface Rule {
  alert: string;
  expr: string;
  for?: string;
  annotations: Record<string, string>;
}
interface Dashboard {
  uid: string;
  panels: Array<{ type: string; title: string; targets?: Array<{ expr: string }> }>;
  templating: { list: Array<{ name: string; query: string | { query: string } }> };
}

let tools: ToolPaths;
beforeAll(async () => {
  tools = await ensureTools();
});

/** helm template with these `--set`s; a decimal goes as JSON (--set would make it a string). */
async function render(...sets: string[]): Promise<Manifest[]> {
  const args = ['template', 'lorenz', chart, '--namespace', 'lorenz-system'];
  for (const set of sets) args.push(/=\d+\.\d+$/.test(set) ? '--set-json' : '--set', set);
  const { stdout } = await exec(tools.helm, args, { maxBuffer: 32 * 1024 * 1024 });
  return parseAllDocuments(stdout)
    .map((doc) => doc.toJS() as Manifest | null)
    .filter((doc): doc is Manifest => doc !== null);
}

/** The metric names a PromQL expression reads (every exported family has one of these prefixes). */
const metricNames = (expr: string): string[] => [
  ...new Set(
    [
      ...expr.matchAll(/\b(?:lorenz|controller_runtime|workqueue|leader_election)_[a-z0-9_]+/g),
      ...expr.matchAll(/\bup(?=\{)/g),
    ].map((match) => match[0]),
  ),
];

/** Names the controller's registry exposes: families, and histograms' series. */
async function exportedNames(): Promise<Set<string>> {
  const runtime = createRuntimeMetrics();
  runMetrics(runtime.registry);
  createArchiveMetrics(runtime.registry, () => []);
  const names = new Set<string>(PROMETHEUS_SERIES);
  for (const family of await runtime.registry.getMetricsAsJSON()) {
    names.add(family.name);
    if (String(family.type) === 'histogram') {
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${family.name}${suffix}`);
    }
  }
  return names;
}

/** Brackets, braces and parentheses close in order, outside quoted strings. */
function balanced(expr: string): boolean {
  const open: string[] = [];
  const pairs: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
  let quoted = false;
  for (const char of expr) {
    if (char === '"') quoted = !quoted;
    if (quoted) continue;
    if ('([{'.includes(char)) open.push(char);
    else if (char in pairs && open.pop() !== pairs[char]) return false;
  }
  return open.length === 0 && !quoted;
}

/** GitHub's anchors of docs/metrics.md's headings. */
const docAnchors = (): Set<string> =>
  new Set(
    readFileSync(join(root, 'docs/metrics.md'), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('#'))
      .map((line) =>
        line
          .replace(/^#+\s*/, '')
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, '')
          .replace(/ /g, '-'),
      ),
  );

const RUN_ALERTS = [
  'LorenzTrackerUnreachable',
  'LorenzRunFailureRatioHigh',
  'LorenzArchiveLagging',
  'LorenzArchiveFailing',
];

describe('the chart’s dashboard and run alerts', () => {
  it('renders neither by default', async () => {
    const kinds = (await render()).map((m) => `${m.kind}/${m.metadata.name}`);
    expect(kinds).not.toContain('ConfigMap/lorenz-dashboard');
    expect(kinds.some((kind) => kind.startsWith('PrometheusRule/'))).toBe(false);
  });

  it('scrapes with honorLabels: the runs’ namespace stays `namespace`, not `exported_namespace`', async () => {
    const manifests = await render('metrics.serviceMonitor.enabled=true');
    const monitor = manifests.find((m) => m.kind === 'ServiceMonitor') as Manifest & {
      spec: { endpoints: Array<{ port: string; honorLabels?: boolean }> };
    };
    expect(monitor.spec.endpoints).toMatchObject([{ port: 'metrics', honorLabels: true }]);
  });

  it('ships dashboards/lorenz.json as a ConfigMap for Grafana’s sidecar', async () => {
    const manifests = await render(
      'metrics.dashboard.enabled=true',
      'metrics.dashboard.annotations.grafana_folder=Lorenz',
    );
    const configMap = manifests.find((m) => m.metadata.name === 'lorenz-dashboard');
    expect(configMap?.kind).toBe('ConfigMap');
    expect(configMap?.metadata.labels?.grafana_dashboard).toBe('1');
    const file = readFileSync(join(chart, 'dashboards/lorenz.json'), 'utf8');
    expect(JSON.parse(configMap?.data?.['lorenz.json'] ?? '')).toEqual(JSON.parse(file));
    const dashboard = JSON.parse(file) as Dashboard;
    const titles = dashboard.panels.filter((p) => p.type !== 'row').map((p) => p.title);
    for (const wanted of [
      /finished by reason/,
      /Failure ratio/,
      /^Running runs/,
      /Run duration p50 \/ p95/,
      /Hook duration p50 \/ p95/,
      /polls by result/,
      /Tokens by Workflow/,
      /Archive lag/,
      /Archive failures/,
    ]) {
      expect(
        titles.some((title) => wanted.test(title)),
        String(wanted),
      ).toBe(true);
    }
  });

  it('adds the run alerts, each with a summary, a description and a runbook in docs/metrics.md', async () => {
    const manifests = await render(
      'metrics.prometheusRule.enabled=true',
      'metrics.prometheusRule.failureRatio=0.4',
      'metrics.prometheusRule.failureMinRuns=7',
      'metrics.prometheusRule.archiveLagSeconds=900',
    );
    const rule = manifests.find((m) => m.kind === 'PrometheusRule') as Manifest & {
      spec: { groups: Array<{ name: string; rules: Rule[] }> };
    };
    const rules = rule.spec.groups.flatMap((group) => group.rules);
    const byName = new Map(rules.map((entry) => [entry.alert, entry]));
    expect(RUN_ALERTS.filter((name) => byName.has(name))).toEqual(RUN_ALERTS);
    const anchors = docAnchors();
    for (const name of RUN_ALERTS) {
      const alert = byName.get(name)!;
      expect(alert.annotations.summary, name).toBeTruthy();
      expect(alert.annotations.description, name).toBeTruthy();
      const [page, anchor] = alert.annotations.runbook_url!.split('#');
      expect(page, name).toMatch(/\/docs\/metrics\.md$/);
      expect(anchors.has(anchor!), `${name}: #${anchor} in docs/metrics.md`).toBe(true);
      expect(alert.expr, name).toContain('job="lorenz-metrics"');
    }
    // The thresholds come from the values.
    expect(byName.get('LorenzRunFailureRatioHigh')!.expr).toMatch(/\) > 0\.4\n/);
    expect(byName.get('LorenzRunFailureRatioHigh')!.expr).toMatch(/>= 7$/);
    expect(byName.get('LorenzArchiveLagging')).toMatchObject({
      expr: 'max(lorenz_archive_lag_seconds{job="lorenz-metrics"}) > 900',
      for: '10m',
    });
    expect(byName.get('LorenzArchiveFailing')).toMatchObject({
      expr: 'sum by (code) (rate(lorenz_archive_failures_total{job="lorenz-metrics"}[10m])) > 0',
      for: '15m',
    });
    const tracker = byName.get('LorenzTrackerUnreachable')!.expr;
    expect(tracker).toContain('result="error"}[10m]');
    expect(tracker).toContain('unless on (namespace, workflow)');
    expect(tracker).toContain('result="ok"}[10m]');
  });

  it('reads only metrics the controller exports, in expressions that close', async () => {
    const exported = await exportedNames();
    const manifests = await render('metrics.prometheusRule.enabled=true');
    const rule = manifests.find((m) => m.kind === 'PrometheusRule') as Manifest & {
      spec: { groups: Array<{ rules: Rule[] }> };
    };
    const dashboard = JSON.parse(
      readFileSync(join(chart, 'dashboards/lorenz.json'), 'utf8'),
    ) as Dashboard;
    const expressions = [
      ...rule.spec.groups.flatMap((group) => group.rules.map((entry) => entry.expr)),
      ...dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr)),
      ...dashboard.templating.list.flatMap((variable) =>
        typeof variable.query === 'object' ? [variable.query.query] : [],
      ),
    ];
    const read = expressions.flatMap(metricNames);
    expect(read).toEqual(expect.arrayContaining(['lorenz_issueruns_finished_total']));
    expect([...new Set(read)].filter((name) => !exported.has(name))).toEqual([]);
    expect(expressions.filter((expr) => !balanced(expr))).toEqual([]);
  });
});
