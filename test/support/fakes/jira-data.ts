// Issues for the Jira stand-in, and how they look on the wire: IssueBean objects as Jira
// Cloud REST v3 returns them (string ids, `fields` holding only what was asked for, ADF
// descriptions, statuses with their statusCategory, Blocks links with the linked issue's
// summary and status, times as `2026-01-02T03:04:05.000+0000`).

export interface FakeJiraIssue {
  id: string;
  key: string;
  summary: string;
  status: string;
  priority: string | null;
  labels: string[];
  /** Keys of the issues that block this one. */
  blockedBy: string[];
  /** An ADF document, or null. */
  description: unknown;
  assignee: string | null;
  created: string;
  updated: string;
}

/** A site's statuses and their categories (id, key, colour, name as Jira has them). */
export const STATUSES: Readonly<Record<string, { id: string; category: string }>> = {
  'To Do': { id: '10000', category: 'new' },
  Todo: { id: '10001', category: 'new' },
  'In Progress': { id: '3', category: 'indeterminate' },
  Review: { id: '10002', category: 'indeterminate' },
  Done: { id: '10003', category: 'done' },
};

const CATEGORIES: Readonly<Record<string, { id: number; colorName: string; name: string }>> = {
  new: { id: 2, colorName: 'blue-gray', name: 'To Do' },
  indeterminate: { id: 4, colorName: 'yellow', name: 'In Progress' },
  done: { id: 3, colorName: 'green', name: 'Done' },
};

const PRIORITY_IDS: Readonly<Record<string, string>> = {
  Highest: '1',
  High: '2',
  Medium: '3',
  Low: '4',
  Lowest: '5',
};

export function paragraphs(...texts: string[]) {
  return {
    type: 'doc',
    version: 1,
    content: texts.map((text) => ({ type: 'paragraph', content: [{ type: 'text', text }] })),
  };
}

const day = (n: number) => `2026-01-${String(n).padStart(2, '0')}T09:00:00.000+0000`;

function issue(n: number, project: string, fields: Partial<FakeJiraIssue>): FakeJiraIssue {
  return {
    id: String(10_000 + n),
    key: `${project}-${n}`,
    summary: `Issue ${n}`,
    status: 'Todo',
    priority: 'Medium',
    labels: [],
    blockedBy: [],
    description: null,
    assignee: null,
    created: day(n),
    updated: day(n + 1),
    ...fields,
  };
}

export function fixtureIssues(): FakeJiraIssue[] {
  return [
    issue(1, 'ENG', {
      summary: 'Fix the login redirect',
      priority: 'High',
      labels: ['Backend', 'agent'],
      description: paragraphs('Users land on /home.', 'Expected: back where they were.'),
      assignee: '5b10a2844c20165700ede21g',
    }),
    issue(2, 'ENG', { status: 'In Progress', priority: 'Highest', blockedBy: ['ENG-3', 'ENG-4'] }),
    issue(3, 'ENG', { status: 'Done', priority: 'Low' }),
    issue(4, 'ENG', { status: 'Review', priority: 'Lowest', labels: ['agent'] }),
    issue(5, 'ENG', { status: 'To Do', priority: null }),
    issue(6, 'OPS', { summary: 'Another project', priority: 'Medium' }),
  ];
}

export function statusBean(site: string, name: string) {
  const status = STATUSES[name] ?? { id: '99', category: 'new' };
  const category = CATEGORIES[status.category] ?? { id: 2, colorName: 'blue-gray', name: 'To Do' };
  return {
    self: `${site}/rest/api/3/status/${status.id}`,
    description: '',
    iconUrl: `${site}/images/icons/statuses/generic.png`,
    name,
    id: status.id,
    statusCategory: {
      self: `${site}/rest/api/3/statuscategory/${category.id}`,
      id: category.id,
      key: status.category,
      colorName: category.colorName,
      name: category.name,
    },
  };
}

function priorityBean(site: string, name: string | null) {
  if (name === null) return null;
  const id = PRIORITY_IDS[name] ?? '3';
  return {
    self: `${site}/rest/api/3/priority/${id}`,
    iconUrl: `${site}/images/icons/priorities/${name.toLowerCase()}.svg`,
    name,
    id,
  };
}

/** The short form of a linked issue inside issuelinks. */
function linkedIssue(site: string, other: FakeJiraIssue) {
  return {
    id: other.id,
    key: other.key,
    self: `${site}/rest/api/3/issue/${other.id}`,
    fields: {
      summary: other.summary,
      status: statusBean(site, other.status),
      priority: priorityBean(site, other.priority),
      issuetype: { id: '10001', name: 'Task', subtask: false },
    },
  };
}

const BLOCKS = { id: '10000', name: 'Blocks', inward: 'is blocked by', outward: 'blocks' };

function issueLinks(site: string, all: readonly FakeJiraIssue[], issue: FakeJiraIssue) {
  const links: Record<string, unknown>[] = [];
  for (const other of all) {
    const type = { ...BLOCKS, self: `${site}/rest/api/3/issueLinkType/10000` };
    // This issue is blocked by `other`: seen from here, `other` is the inward issue.
    if (issue.blockedBy.includes(other.key)) {
      links.push({ id: `${other.id}${issue.id}`, type, inwardIssue: linkedIssue(site, other) });
    }
    // This issue blocks `other`: the outward issue, which is not a blocker of this one.
    if (other.blockedBy.includes(issue.key)) {
      links.push({ id: `${issue.id}${other.id}`, type, outwardIssue: linkedIssue(site, other) });
    }
  }
  return links;
}

/** An IssueBean with only the requested fields, as Jira answers a search or a bulk fetch. */
export function issueBean(
  site: string,
  all: readonly FakeJiraIssue[],
  issue: FakeJiraIssue,
  fields: readonly string[],
) {
  const every: Record<string, unknown> = {
    summary: issue.summary,
    description: issue.description,
    status: statusBean(site, issue.status),
    priority: priorityBean(site, issue.priority),
    labels: issue.labels,
    issuelinks: issueLinks(site, all, issue),
    assignee:
      issue.assignee === null
        ? null
        : { accountId: issue.assignee, displayName: 'Agent Bot', active: true },
    created: issue.created,
    updated: issue.updated,
  };
  return {
    expand: 'renderedFields,names,schema,operations,editmeta,changelog,versionedRepresentations',
    id: issue.id,
    self: `${site}/rest/api/3/issue/${issue.id}`,
    key: issue.key,
    fields: Object.fromEntries(fields.filter((f) => f in every).map((f) => [f, every[f]])),
  };
}
