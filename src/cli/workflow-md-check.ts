import { LineCounter, parseDocument } from 'yaml';
import { checkHookTemplate } from '../template/hook.js';
import { loadWorkflowText } from '../template/load-workflow.js';
import { TRACKER_KINDS } from '../tracker/index.js';
import {
  HOOK_FIELDS,
  configProblems,
  settingErrorCode,
  type WorkflowConfig,
} from '../workflow/config.js';
import { LorenzError, isLorenzError, type LorenzErrorCode } from '../workflow/errors.js';
import { HOOK_NAMES } from '../workflow/events.js';
import {
  effectivePromptTemplate,
  parseWorkflowContent,
  workflowLayout,
} from '../workflow/front-matter.js';
import { parsePromptTemplate } from '../template/prompt.js';
import { lineOf, parsePath } from './yaml-lines.js';

/**
 * Everything wrong with one WORKFLOW.md text, each with the line of the text it is on: the
 * front matter (every invalid setting, not only the first), tracker.kind against the
 * trackers this build has, the hook templates and the prompt template, which a run would
 * meet only later. The text may be a file or the value of a manifest's field.
 */

export interface Finding {
  code: LorenzErrorCode;
  /** The key path in the front matter (`agent.max_turns`), `prompt`, or '' for the file. */
  path: string;
  message: string;
  /** 1-based line of the text; null when not known. */
  line: number | null;
}

export interface WorkflowTextCheck {
  problems: Finding[];
  warnings: Finding[];
  /** The one-line summary of a valid text. */
  summary: string | null;
}

/** Key path → line of the text, through the front matter's own YAML. */
function frontMatterLines(text: string): (path: string) => number | null {
  const layout = workflowLayout(text);
  if (layout === null) return () => null;
  const counter = new LineCounter();
  const document = parseDocument(layout.yaml, { lineCounter: counter, logLevel: 'silent' });
  return (path) => {
    if (path === '') return null;
    return lineOf(document.contents, parsePath(path), counter) + layout.yamlLine - 1;
  };
}

/** The text's line of a prompt template line (the body is trimmed before it is parsed). */
function promptLine(text: string, templateLine: number): number {
  const lines = text.split(/\r?\n|\u2028|\u2029/);
  const bodyLine = workflowLayout(text)?.bodyLine ?? 1;
  let first = bodyLine - 1;
  while (first < lines.length && (lines[first] ?? '').trim() === '') first += 1;
  return first + templateLine;
}

function trackerKindProblem(text: string): Omit<Finding, 'line'> | null {
  let kind: unknown;
  try {
    const tracker = parseWorkflowContent(text).frontMatter.tracker;
    kind =
      typeof tracker === 'object' && tracker !== null
        ? (tracker as { kind?: unknown }).kind
        : undefined;
  } catch {
    return null; // the front matter does not parse: that is reported already
  }
  if (
    typeof kind !== 'string' ||
    kind === '' ||
    (TRACKER_KINDS as readonly string[]).includes(kind)
  ) {
    return null;
  }
  return {
    code: 'unsupported_tracker_kind',
    path: 'tracker.kind',
    message: `${JSON.stringify(kind)} is not a tracker this build can poll (known: ${TRACKER_KINDS.join(', ')})`,
  };
}

function hookProblems(config: WorkflowConfig): Omit<Finding, 'line'>[] {
  const problems: Omit<Finding, 'line'>[] = [];
  for (const name of HOOK_NAMES) {
    const command = config.hooks[HOOK_FIELDS[name]];
    if (command === null) continue;
    try {
      checkHookTemplate(name, command);
    } catch (error) {
      if (!isLorenzError(error)) throw error;
      const prefix = `hooks.${name}: `;
      const message = error.message.startsWith(prefix)
        ? error.message.slice(prefix.length)
        : error.message;
      problems.push({ code: error.code, path: `hooks.${name}`, message });
    }
  }
  return problems;
}

export function summarize(config: WorkflowConfig): string {
  const hooks = HOOK_NAMES.filter((name) => config.hooks[HOOK_FIELDS[name]] !== null);
  return (
    `tracker ${config.tracker.kind}, agent ${config.agent.kind}, ` +
    `hooks ${hooks.length > 0 ? hooks.join(',') : 'none'}, isolation ${config.workspace.isolation}, ` +
    `ensemble_size ${config.agent.ensembleSize}, max_turns ${config.agent.maxTurns}`
  );
}

/** What is wrong with `text`, a WORKFLOW.md; `source` names it in the loader's messages. */
export function checkWorkflowText(text: string, source: string): WorkflowTextCheck {
  const lineFor = frontMatterLines(text);
  const problems: Omit<Finding, 'line'>[] = [];
  const located: Finding[] = [];
  let config: WorkflowConfig | null = null;
  let warnings: string[] = [];
  const promptProblem = (error: LorenzError, prefixed: boolean): Finding => {
    const templateLine = /line:(\d+)/.exec(error.message)?.[1];
    const line = templateLine === undefined ? null : promptLine(text, Number(templateLine));
    const message = prefixed ? error.message.slice('prompt: '.length) : error.message;
    return { code: error.code, path: 'prompt', message, line };
  };
  try {
    ({ config, warnings } = loadWorkflowText(text, source));
  } catch (error) {
    if (!isLorenzError(error)) throw error;
    if (error.code === 'invalid_workflow_config' || error.code === 'invalid_ssh_timeout') {
      for (const { path, rule } of configProblems(error)) {
        problems.push({ code: settingErrorCode(path), path, message: rule });
      }
      // The loader stops at the settings; the prompt is checked all the same.
      try {
        parsePromptTemplate(effectivePromptTemplate(parseWorkflowContent(text).body));
      } catch (promptError) {
        if (!isLorenzError(promptError)) throw promptError;
        located.push(promptProblem(promptError, false));
      }
    } else if (error.code === 'workflow_parse_error') {
      const line = typeof error.detail?.line === 'number' ? error.detail.line : null;
      located.push({ code: error.code, path: '', message: error.message, line });
    } else if (error.code === 'template_parse_error' && error.message.startsWith('prompt: ')) {
      located.push(promptProblem(error, true));
    } else {
      located.push({ code: error.code, path: '', message: error.message, line: null });
    }
  }
  const tracker = trackerKindProblem(text);
  if (tracker) problems.push(tracker);
  if (config) problems.push(...hookProblems(config));
  const all = [
    ...located,
    ...problems.map((problem) => ({ ...problem, line: lineFor(problem.path) })),
  ];
  all.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
  return {
    problems: all,
    warnings: warnings.map((warning) => {
      const key = /^unknown key (.+)$/.exec(warning)?.[1] ?? '';
      return { code: 'invalid_workflow_config', path: key, message: warning, line: lineFor(key) };
    }),
    summary: config && all.length === 0 ? summarize(config) : null,
  };
}
