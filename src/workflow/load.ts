import { readFile } from 'node:fs/promises';
import { parsePromptTemplate } from '../template/prompt.js';
import { type WorkflowConfig, parseConfig } from './config.js';
import { LorenzError } from './errors.js';
import { effectivePromptTemplate, parseWorkflowContent } from './front-matter.js';

export { type ParsedConfig, type WorkflowConfig, parseConfig } from './config.js';
export {
  DEFAULT_PROMPT_TEMPLATE,
  type WorkflowContent,
  effectivePromptTemplate,
  parseWorkflowContent,
} from './front-matter.js';

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
 * template fails at load (`template_parse_error`) rather than at the first dispatch.
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
