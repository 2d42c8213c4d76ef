import { parseArgs } from 'node:util';
import { DEFAULT_POD_TEMPLATE_POLICY } from '../controller/shared/pod-template-check.js';
import { LorenzError } from '../workflow/errors.js';
import { workflowLayout } from '../workflow/front-matter.js';
import { readWorkflowFile } from '../template/load-workflow.js';
import { displayPath } from '../workflow/text-file.js';
import { checkManifests, hasKubernetesObjects, type StreamReport } from './manifest-check.js';
import { UsageError } from './usage.js';
import { checkWorkflowText, type Finding } from './workflow-md-check.js';

type Output = (text: string) => void;

/**
 * `lorenz workflow validate FILE|-`: what users keep in GitOps repositories, judged offline
 * as the cluster would. A WORKFLOW.md (front matter and prompt), or YAML holding Workflow
 * and IssueRun manifests (one file, several documents, `kustomize build` output on stdin).
 * Every problem is one line on stderr, `lorenz: <code>: <file>:<line>: …`; every valid
 * document one line on stdout. Exit 0 when nothing is refused, 2 when anything is (an
 * invalid workflow, whatever the codes' own exit codes), 2 for a file that is neither.
 */

async function readInput(path: string): Promise<string> {
  if (path === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }
  return readWorkflowFile(path);
}

const at = (file: string, line: number | null) => (line === null ? file : `${file}:${line}`);

function validateWorkflowMd(text: string, file: string, out: Output, err: Output): number {
  const check = checkWorkflowText(text, file);
  for (const warning of check.warnings)
    err(`warning: ${at(file, warning.line)}: ${warning.message}\n`);
  const shown = (finding: Finding) => (finding.path === '' ? '' : `${finding.path}: `);
  for (const problem of check.problems) {
    err(
      `lorenz: ${problem.code}: ${at(file, problem.line)}: ${shown(problem)}${problem.message}\n`,
    );
  }
  if (check.summary === null) return 2;
  out(`${file}: valid (${check.summary})\n`);
  return 0;
}

function reportStream(report: StreamReport, file: string, out: Output, err: Output): number {
  let invalid = false;
  for (const document of report.documents) {
    const label = document.label === '' ? '' : ` (${document.label})`;
    const where = `document ${document.index}${label}`;
    for (const warning of document.warnings) {
      err(`warning: ${file}:${warning.line}: ${where}: ${warning.path}: ${warning.message}\n`);
    }
    for (const problem of document.problems) {
      const path = problem.path === '' ? '' : `${problem.path}: `;
      err(
        `lorenz: ${problem.code}: ${file}:${problem.line}: ${where}: ${path}${problem.message}\n`,
      );
    }
    if (document.problems.length > 0) invalid = true;
    else out(`${file}: ${where}: valid (${document.summary})\n`);
  }
  if (report.skipped.length > 0) {
    const kinds = [...new Set(report.skipped)].join(', ');
    const count = report.skipped.length;
    out(`${file}: skipped ${count} document${count === 1 ? '' : 's'} of other kinds (${kinds})\n`);
  }
  return invalid ? 2 : 0;
}

/** The flags `lorenz workflow validate` parses (their help: cli/command-help.ts). */
export const VALIDATE_OPTIONS = { 'allowed-service-accounts': { type: 'string' } } as const;

/** `lorenz workflow validate FILE|-` */
export async function validateCommand(args: string[], out: Output, err: Output): Promise<number> {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: VALIDATE_OPTIONS,
  });
  if (positionals.length !== 1) throw new UsageError('workflow validate takes exactly one FILE');
  const path = positionals[0] as string;
  const file = path === '-' ? '<stdin>' : displayPath(path);
  const text = await readInput(path);
  const accounts = values['allowed-service-accounts'];
  const policy =
    accounts === undefined
      ? DEFAULT_POD_TEMPLATE_POLICY
      : {
          allowedServiceAccounts: accounts
            .split(',')
            .map((name) => name.trim())
            .filter(Boolean),
        };
  if (hasKubernetesObjects(text)) {
    const report = checkManifests(text, policy);
    if (report.documents.length > 0) return reportStream(report, file, out, err);
    const kinds = [...new Set(report.skipped)].join(', ');
    throw new LorenzError(
      'not_a_workflow_file',
      `${file}: not a WORKFLOW.md (no front matter) and no Workflow or IssueRun documents (${report.skipped.length} of other kinds: ${kinds})`,
    );
  }
  if (workflowLayout(text) === null) {
    throw new LorenzError(
      'not_a_workflow_file',
      `${file}: not a WORKFLOW.md (no front matter) and no Workflow or IssueRun documents`,
    );
  }
  return validateWorkflowMd(text, file, out, err);
}
