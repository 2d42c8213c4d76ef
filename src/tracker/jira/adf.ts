/**
 * Plain text as an Atlassian Document Format document, which REST v3 requires for comment
 * and description bodies: blank lines separate paragraphs, single newlines become hard
 * breaks. ADF refuses empty text nodes, so blank lines inside a paragraph leave none.
 * Markdown is not interpreted: the text arrives as the agent wrote it.
 */
export function textToAdf(plain: string): Record<string, unknown> {
  const paragraphs = plain
    .replace(/\r\n?/g, '\n')
    .split(/\n[ \t]*\n/)
    .map((block) => block.replace(/^\n+|\n+$/g, ''))
    .filter((block) => block.trim() !== '');
  return {
    type: 'doc',
    version: 1,
    content: paragraphs.map((block) => ({ type: 'paragraph', content: inline(block) })),
  };
}

function inline(block: string): Record<string, unknown>[] {
  const nodes: Record<string, unknown>[] = [];
  block.split('\n').forEach((line, index) => {
    if (index > 0) nodes.push({ type: 'hardBreak' });
    if (line !== '') nodes.push({ type: 'text', text: line });
  });
  return nodes;
}
