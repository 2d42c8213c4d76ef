import type { V1PodTemplateSpec } from '@kubernetes/client-node';
import { LineCounter, parseAllDocuments, type Document } from 'yaml';
import { admissionProblems, type LorenzKind } from '../api/admission.js';
import { GROUP, ISSUERUN_KIND, WORKFLOW_KIND } from '../api/constants.js';
import {
  podTemplateProblems,
  type PodTemplatePolicy,
} from '../controller/shared/pod-template-check.js';
import type { LorenzErrorCode } from '../workflow/errors.js';
import { MAX_ALIAS_COUNT } from '../workflow/yaml.js';
import { checkWorkflowText, type Finding } from './workflow-md-check.js';
import {
  blockTextLine,
  formatPath,
  lineOf,
  nodeAt,
  parsePath,
  type PathSegment,
} from './yaml-lines.js';

/**
 * The documents of a YAML stream (a file of manifests, `kustomize build` output) as the
 * cluster would judge them: each Workflow and IssueRun against its CRD and rules (admission),
 * a Workflow's podTemplate against the controller's rules, and its WORKFLOW.md (inline, or
 * from a ConfigMap of the same stream) as the controller loads it. Other kinds are counted
 * and left alone.
 */

export interface ManifestFinding {
  code: LorenzErrorCode;
  line: number;
  /** The field, in the terms of the file: `spec.workflow → agent.max_turns`. */
  path: string;
  message: string;
}

export interface DocumentReport {
  /** 1-based position in the stream. */
  index: number;
  /** `Workflow/app`. */
  label: string;
  problems: ManifestFinding[];
  warnings: ManifestFinding[];
  /** What was checked, for the line a valid document gets. */
  summary: string;
}

export interface StreamReport {
  documents: DocumentReport[];
  /** Documents of other kinds, by kind. */
  skipped: string[];
}

interface Parsed {
  index: number;
  document: Document.Parsed;
  value: Record<string, unknown>;
}

const isMap = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function lorenzKind(value: Record<string, unknown>): LorenzKind | null {
  const group = typeof value.apiVersion === 'string' ? value.apiVersion.split('/')[0] : '';
  if (group !== GROUP) return null;
  return value.kind === WORKFLOW_KIND || value.kind === ISSUERUN_KIND ? value.kind : null;
}

/** Whether any document is a Kubernetes object (a map with apiVersion and kind). */
export function hasKubernetesObjects(text: string): boolean {
  return readStream(text).parsed.some(({ value }) => typeof value.kind === 'string');
}

function readStream(text: string) {
  const lines = new LineCounter();
  const documents = parseAllDocuments(text, {
    lineCounter: lines,
    logLevel: 'silent',
    uniqueKeys: true,
  });
  const parsed: Parsed[] = [];
  const broken: { index: number; line: number; message: string }[] = [];
  const list = Array.isArray(documents) ? documents : [];
  list.forEach((document, position) => {
    const index = position + 1;
    const [error] = document.errors;
    if (error) {
      const message = error.message.split(/ at line \d+, column \d+/)[0] ?? error.message;
      broken.push({ index, line: error.linePos?.[0].line ?? 1, message });
      return;
    }
    let value: unknown;
    try {
      value = document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (error) {
      const line = lines.linePos(document.range[0]).line;
      broken.push({ index, line, message: error instanceof Error ? error.message : String(error) });
      return;
    }
    if (isMap(value) && typeof value.apiVersion === 'string' && typeof value.kind === 'string') {
      parsed.push({ index, document, value });
    } else if (value !== null && value !== undefined) {
      parsed.push({ index, document, value: { kind: undefined } });
    }
  });
  return { lines, parsed, broken };
}

function nameOf(value: Record<string, unknown>): { name: string; namespace: string | undefined } {
  const metadata = isMap(value.metadata) ? value.metadata : {};
  return {
    name: typeof metadata.name === 'string' ? metadata.name : '',
    namespace: typeof metadata.namespace === 'string' ? metadata.namespace : undefined,
  };
}

/** `kubectl apply -n` puts objects without a namespace into one: unset matches any. */
const sameNamespace = (a: string | undefined, b: string | undefined) =>
  a === undefined || b === undefined || a === b;

interface Context {
  lines: LineCounter;
  configMaps: Parsed[];
  policy: PodTemplatePolicy;
}

/** The findings of a WORKFLOW.md held in a field of a document, placed on the file's lines. */
function embedded(
  parsed: Parsed,
  field: PathSegment[],
  text: string,
  source: string,
  context: Context,
): { problems: ManifestFinding[]; warnings: ManifestFinding[]; summary: string | null } {
  const check = checkWorkflowText(text, source);
  const contents = parsed.document.contents;
  const start = blockTextLine(nodeAt(contents, field), context.lines);
  const fieldLine = lineOf(contents, field, context.lines);
  const place = (finding: Finding): ManifestFinding => ({
    code: finding.code,
    line: start !== null && finding.line !== null ? start + finding.line - 1 : fieldLine,
    path: `${formatPath(field)} → ${finding.path === '' ? 'WORKFLOW.md' : finding.path}`,
    message: finding.message,
  });
  return {
    problems: check.problems.map(place),
    warnings: check.warnings.map(place),
    summary: check.summary,
  };
}

function admission(parsed: Parsed, kind: LorenzKind, context: Context): ManifestFinding[] {
  return admissionProblems(kind, parsed.value).map((problem) => ({
    code: 'invalid_manifest',
    line: lineOf(parsed.document.contents, problem.path, context.lines),
    path: formatPath(problem.path),
    message: `${problem.message} (admission refuses it)`,
  }));
}

/** The controller's podTemplate problems: `podTemplate.spec.x[agent]: why` → path and why. */
function podTemplateFindings(parsed: Parsed, context: Context): ManifestFinding[] {
  const spec = parsed.value.spec as Record<string, unknown>;
  const template = spec.podTemplate as V1PodTemplateSpec | undefined;
  return podTemplateProblems(template, context.policy).map((problem) => {
    const [, where = '', rest = ''] = /^(\S+?):?\s(.*)$/.exec(problem) ?? [];
    const segments = ['spec', ...parsePath(where)];
    return {
      code: 'invalid_pod_template',
      line: lineOf(parsed.document.contents, segments, context.lines),
      path: formatPath(segments),
      message: `${rest} (the controller refuses it: ConfigValid False, WorkflowInvalid)`,
    };
  });
}

/** Where a Workflow's WORKFLOW.md is, and what is wrong with it. */
function workflowText(parsed: Parsed, context: Context) {
  const spec = parsed.value.spec as Record<string, unknown>;
  const { name, namespace } = nameOf(parsed.value);
  if (typeof spec.workflow === 'string') {
    return embedded(
      parsed,
      ['spec', 'workflow'],
      spec.workflow,
      `Workflow ${name} spec.workflow`,
      context,
    );
  }
  const ref = (spec.workflowFrom as { configMapKeyRef: { name: string; key: string } })
    .configMapKeyRef;
  const configMap = context.configMaps.find((candidate) => {
    const found = nameOf(candidate.value);
    return found.name === ref.name && sameNamespace(found.namespace, namespace);
  });
  if (!configMap) {
    const summary = `its WORKFLOW.md is not checked: spec.workflowFrom names ConfigMap ${ref.name} key ${ref.key}, which is not in this input, and the cluster's copy cannot be read offline`;
    return { problems: [], warnings: [], summary };
  }
  const data = isMap(configMap.value.data) ? configMap.value.data : {};
  const text = data[ref.key];
  if (typeof text !== 'string') {
    const field = ['spec', 'workflowFrom', 'configMapKeyRef', 'key'];
    const problem: ManifestFinding = {
      code: 'invalid_manifest',
      line: lineOf(parsed.document.contents, field, context.lines),
      path: formatPath(field),
      message: `ConfigMap ${ref.name} (document ${configMap.index}) has no key ${ref.key} (the controller reports ConfigMapNotFound)`,
    };
    return { problems: [problem], warnings: [], summary: null };
  }
  const result = embedded(
    configMap,
    ['data', ref.key],
    text,
    `ConfigMap ${ref.name} key ${ref.key}`,
    context,
  );
  const relabel = (finding: ManifestFinding) => ({
    ...finding,
    path: `ConfigMap/${ref.name} (document ${configMap.index}) ${finding.path}`,
  });
  return {
    problems: result.problems.map(relabel),
    warnings: result.warnings.map(relabel),
    summary:
      result.summary && `${result.summary}; WORKFLOW.md from ConfigMap/${ref.name} key ${ref.key}`,
  };
}

function checkWorkflow(parsed: Parsed, context: Context): Omit<DocumentReport, 'index' | 'label'> {
  const problems = admission(parsed, WORKFLOW_KIND, context);
  const spec = parsed.value.spec;
  const specProblem = (path: string) => problems.some((problem) => problem.path.startsWith(path));
  // What admission refuses never reaches the controller; what it lets through, the
  // controller judges: the WORKFLOW.md (where the spec says which) and the pod template.
  const warnings: ManifestFinding[] = [];
  let summary = '';
  if (isMap(spec) && !specProblem('spec.workflow') && !problems.some((p) => p.path === 'spec')) {
    const text = workflowText(parsed, context);
    problems.push(...text.problems);
    warnings.push(...text.warnings);
    summary = text.summary ?? '';
  }
  if (isMap(spec) && !specProblem('spec.podTemplate')) {
    problems.push(...podTemplateFindings(parsed, context));
  }
  return { problems: problems.sort((a, b) => a.line - b.line), warnings, summary };
}

function checkIssueRun(parsed: Parsed, context: Context): Omit<DocumentReport, 'index' | 'label'> {
  const problems = admission(parsed, ISSUERUN_KIND, context);
  const spec = isMap(parsed.value.spec) ? parsed.value.spec : {};
  const issue = isMap(spec.issue) ? spec.issue.identifier : undefined;
  const workflow = isMap(spec.workflowRef) ? spec.workflowRef.name : undefined;
  return {
    problems,
    warnings: [],
    summary: `issue ${String(issue)} of Workflow ${String(workflow)}`,
  };
}

/** Judge every document of `text`; null when it holds no Kubernetes object at all. */
export function checkManifests(text: string, policy: PodTemplatePolicy): StreamReport {
  const { lines, parsed, broken } = readStream(text);
  const context: Context = {
    lines,
    policy,
    configMaps: parsed.filter(({ value }) => value.kind === 'ConfigMap'),
  };
  const documents: DocumentReport[] = broken.map(({ index, line, message }) => ({
    index,
    label: '',
    problems: [{ code: 'invalid_manifest', line, path: '', message: `does not parse: ${message}` }],
    warnings: [],
    summary: '',
  }));
  const skipped: string[] = [];
  for (const entry of parsed) {
    const kind = lorenzKind(entry.value);
    if (kind === null) {
      skipped.push(
        typeof entry.value.kind === 'string' ? entry.value.kind : 'not a Kubernetes object',
      );
      continue;
    }
    const label = `${kind}/${nameOf(entry.value).name || '(no name)'}`;
    const report =
      kind === WORKFLOW_KIND ? checkWorkflow(entry, context) : checkIssueRun(entry, context);
    documents.push({ index: entry.index, label, ...report });
  }
  documents.sort((a, b) => a.index - b.index);
  return { documents, skipped };
}
