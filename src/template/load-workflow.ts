import { type WorkflowConfig, parseConfig } from '../workflow/config.js';
import { LorenzError, isLorenzError } from '../workflow/errors.js';
import { displayPath, isMissingFile, readTextFile } from '../workflow/text-file.js';
import { effectivePromptTemplate, parseWorkflowContent } from '../workflow/front-matter.js';
import { parsePromptTemplate } from './prompt.js';
import { parseReviewTemplates } from './review.js';

export interface LoadedWorkflow {
  /** Where the text came from (a path, `Workflow default/app`): for messages only. */
  source: string;
  config: WorkflowConfig;
  /** The effective prompt template: the body, or the default prompt when it is blank. */
  promptTemplate: string;
  warnings: string[];
}

/**
 * Parse and validate a WORKFLOW.md. The prompt template is parsed here as well, so a broken
 * template fails at load (`template_parse_error`) rather than at the first dispatch, and so do
 * the `review:` templates. It lives in the template layer because it needs both: src/workflow
 * knows the file's shape and its config, this layer its templates.
 */
export function loadWorkflowText(text: string, source: string): LoadedWorkflow {
  const { frontMatter, body } = parseWorkflowContent(text);
  const { config, warnings } = parseConfig(frontMatter);
  const promptTemplate = effectivePromptTemplate(body);
  try {
    parsePromptTemplate(promptTemplate);
  } catch (error) {
    // liquidjs's message gives a line and column but not which template: hook errors say
    // `hooks.<name>: `, so the prompt says `prompt: ` (a Workflow condition shows only this).
    if (!isLorenzError(error)) throw error;
    throw new LorenzError(error.code, `prompt: ${error.message}`, error.detail);
  }
  // The review templates name their key themselves (`review.pr_body: …`).
  if (config.review) parseReviewTemplates(config.review);
  return { source, config, promptTemplate, warnings };
}

/**
 * Read and load a WORKFLOW.md. A file that is not there is Lorenz's
 * `missing_workflow_file`; one that is there but cannot be read (a directory, a symlink
 * loop, no permission) is `file_unreadable`, naming the file and the reason.
 */
export async function loadWorkflowFile(path: string): Promise<LoadedWorkflow> {
  return loadWorkflowText(await readWorkflowFile(path), path);
}

/** The text of a WORKFLOW.md file; a missing one is `missing_workflow_file`. */
export async function readWorkflowFile(path: string): Promise<string> {
  try {
    return await readTextFile(path, 'workflow file');
  } catch (error) {
    if (isLorenzError(error) && isMissingFile(error)) {
      throw new LorenzError(
        'missing_workflow_file',
        `workflow file not found: ${displayPath(path)}`,
        { path },
      );
    }
    throw error;
  }
}
