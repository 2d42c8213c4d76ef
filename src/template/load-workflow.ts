import { readFile } from 'node:fs/promises';
import { type WorkflowConfig, parseConfig } from '../workflow/config.js';
import { LorenzError } from '../workflow/errors.js';
import { effectivePromptTemplate, parseWorkflowContent } from '../workflow/front-matter.js';
import { parsePromptTemplate } from './prompt.js';

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
 * template fails at load (`template_parse_error`) rather than at the first dispatch. It
 * lives in the template layer because it needs both: src/workflow knows the file's shape
 * and its config, this layer its templates.
 */
export function loadWorkflowText(text: string, source: string): LoadedWorkflow {
  const { frontMatter, body } = parseWorkflowContent(text);
  const { config, warnings } = parseConfig(frontMatter);
  const promptTemplate = effectivePromptTemplate(body);
  parsePromptTemplate(promptTemplate);
  return { source, config, promptTemplate, warnings };
}

export async function loadWorkflowFile(path: string): Promise<LoadedWorkflow> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new LorenzError('missing_workflow_file', `workflow file not found: ${path}`, { path });
    }
    throw error;
  }
  return loadWorkflowText(text, path);
}
