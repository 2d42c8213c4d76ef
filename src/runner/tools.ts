import { readFile } from 'node:fs/promises';
import type { McpServer } from '../agent/index.js';
import { errorMessage } from '../workflow/errors.js';

/** The agent-tools gateway as the runner's flags give it. */
export interface RunnerTools {
  url: string;
  /** The mounted token Secret's file: read here, never put in anyone's environment. */
  tokenFile: string;
  serverName: string;
}

/**
 * The bearer token, trimmed (a file written by hand may end in a newline). An unreadable or
 * empty file is an error: a run that was meant to have tools should say why it has none.
 */
export async function readToolsToken(tools: RunnerTools): Promise<string> {
  let text: string;
  try {
    text = await readFile(tools.tokenFile, 'utf8');
  } catch (error) {
    throw new Error(`cannot read the tools token (${tools.tokenFile}): ${errorMessage(error)}`, {
      cause: error,
    });
  }
  const token = text.trim();
  if (!token) throw new Error(`the tools token file ${tools.tokenFile} is empty`);
  return token;
}

/** The gateway as an ACP http MCP server: the token travels only in its Authorization header. */
export const gatewayServer = (tools: RunnerTools, token: string): McpServer => ({
  type: 'http',
  name: tools.serverName,
  url: tools.url,
  headers: [{ name: 'Authorization', value: `Bearer ${token}` }],
});
