// The Linear stand-in's data: plain records, and the filter semantics of Linear's
// IssueFilter for the keys the adapter sends. A filter key the stand-in cannot evaluate is an
// error, so a query the adapter changes is never matched by accident.

export interface FakeUser {
  id: string;
  name: string;
  /** Linear's User.email is non-null. */
  email: string;
}

export interface FakeState {
  id: string;
  name: string;
  /** Linear's state types: triage, backlog, unstarted, started, completed, canceled. */
  type: string;
}

export interface FakeProject {
  id: string;
  slugId: string;
  name: string;
  labels: string[];
  /** The teams the project belongs to; a new issue goes to the first. */
  teamIds: string[];
}

/** Workflow states belong to a team; each team lists the ones it has. */
export interface FakeTeam {
  id: string;
  key: string;
  name: string;
  stateIds: string[];
}

export interface FakeComment {
  id: string;
  issueId: string;
  body: string;
  userId: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface FakeIssue {
  id: string;
  identifier: string;
  title: string;
  description: string | null;
  /** 0 none, 1 urgent … 4 low. */
  priority: number;
  stateId: string;
  teamId: string;
  projectId: string | null;
  assigneeId: string | null;
  labels: string[];
  createdAt: string;
  updatedAt: string;
}

/** `issueId` blocks (or relates to, duplicates) `relatedIssueId`. */
export interface FakeRelation {
  id: string;
  type: 'blocks' | 'related' | 'duplicate';
  issueId: string;
  relatedIssueId: string;
}

export interface FakeData {
  viewerId: string;
  users: FakeUser[];
  states: FakeState[];
  teams: FakeTeam[];
  projects: FakeProject[];
  issues: FakeIssue[];
  relations: FakeRelation[];
  comments: FakeComment[];
}

type Filter = Record<string, unknown>;

export class UnsupportedFilter extends Error {}

function isMap(value: unknown): value is Filter {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function entries(filter: unknown, where: string): [string, unknown][] {
  if (!isMap(filter)) throw new UnsupportedFilter(`${where}: not an object`);
  return Object.entries(filter).filter(([, value]) => value !== undefined);
}

/** StringComparator / IDComparator, the operators the adapter may use. */
function compare(value: string | null, comparator: unknown, where: string): boolean {
  return entries(comparator, where).every(([operator, operand]) => {
    const text = typeof operand === 'string' ? operand : '';
    const list = Array.isArray(operand) ? operand.map(String) : [];
    switch (operator) {
      case 'eq':
        return value === operand;
      case 'neq':
        return value !== operand;
      case 'in':
        return value !== null && list.includes(value);
      case 'nin':
        return value === null || !list.includes(value);
      case 'eqIgnoreCase':
        return value !== null && value.toLowerCase() === text.toLowerCase();
      case 'neqIgnoreCase':
        return value === null || value.toLowerCase() !== text.toLowerCase();
      default:
        throw new UnsupportedFilter(`${where}.${operator}: the stand-in does not evaluate it`);
    }
  });
}

/** `and`/`or` over nested filters of the same type; undefined for any other key. */
function logical(key: string, operand: unknown, test: (filter: unknown) => boolean) {
  if (key === 'and') return (operand as unknown[]).every(test);
  if (key === 'or') return (operand as unknown[]).some(test);
  return undefined;
}

type Matcher<T> = (subject: T, filter: unknown, where: string) => boolean;

/**
 * The matcher of one filter type: `and`/`or` nest filters of the same type, `field` decides
 * each other key, and a key it does not know (undefined) is refused as one the stand-in does
 * not evaluate.
 */
function filterOf<T>(
  field: (subject: T, key: string, operand: unknown, where: string) => boolean | undefined,
): Matcher<T> {
  const matches = (subject: T, filter: unknown, where: string): boolean =>
    entries(filter, where).every(([key, operand]) => {
      const combined = logical(key, operand, (f) => matches(subject, f, where));
      if (combined !== undefined) return combined;
      const held = field(subject, key, operand, where);
      if (held === undefined) {
        throw new UnsupportedFilter(`${where}.${key}: the stand-in does not evaluate it`);
      }
      return held;
    });
  return matches;
}

const labelsMatch: Matcher<readonly string[]> = filterOf((labels, key, operand, where) => {
  if (key === 'some') return labelsMatch(labels, operand, `${where}.some`);
  // A collection filter's own `name` holds when some label's name does.
  if (key === 'name') return labels.some((label) => compare(label, operand, `${where}.name`));
  return undefined;
});

const projectMatches = filterOf<FakeProject | null>((project, key, operand, where) => {
  if (key === 'null') return (project === null) === operand;
  if (project === null) return false;
  if (key === 'id') return compare(project.id, operand, `${where}.id`);
  if (key === 'slugId') return compare(project.slugId, operand, `${where}.slugId`);
  if (key === 'name') return compare(project.name, operand, `${where}.name`);
  if (key === 'labels') return labelsMatch(project.labels, operand, `${where}.labels`);
  return undefined;
});

const stateMatches = filterOf<FakeState>((state, key, operand, where) => {
  if (key === 'id') return compare(state.id, operand, `${where}.id`);
  if (key === 'name') return compare(state.name, operand, `${where}.name`);
  if (key === 'type') return compare(state.type, operand, `${where}.type`);
  return undefined;
});

const userMatches = filterOf<string | null>((userId, key, operand, where) => {
  if (key === 'null') return (userId === null) === operand;
  if (key === 'id') return userId !== null && compare(userId, operand, `${where}.id`);
  return undefined;
});

export function issueMatches(
  data: FakeData,
  issue: FakeIssue,
  filter: unknown,
  where = 'filter',
): boolean {
  return filterOf<FakeIssue>((subject, key, operand, at) => {
    if (key === 'id') return compare(subject.id, operand, `${at}.id`);
    if (key === 'project') {
      const project = data.projects.find((p) => p.id === subject.projectId) ?? null;
      return projectMatches(project, operand, `${at}.project`);
    }
    if (key === 'state') return stateMatches(stateOf(data, subject), operand, `${at}.state`);
    if (key === 'assignee') return userMatches(subject.assigneeId, operand, `${at}.assignee`);
    return undefined;
  })(issue, filter, where);
}

/** The user `id` names, or null (no one, or no such user). */
export function userById(data: FakeData, id: string | null | undefined): FakeUser | null {
  return data.users.find((user) => user.id === id) ?? null;
}

export function stateOf(data: FakeData, issue: FakeIssue): FakeState {
  const state = data.states.find((s) => s.id === issue.stateId);
  if (state === undefined) throw new Error(`fixture: issue ${issue.identifier} has no state`);
  return state;
}

const STATES: FakeState[] = [
  { id: 'st-backlog', name: 'Backlog', type: 'backlog' },
  { id: 'st-todo', name: 'Todo', type: 'unstarted' },
  { id: 'st-progress', name: 'In Progress', type: 'started' },
  { id: 'st-done', name: 'Done', type: 'completed' },
  { id: 'st-canceled', name: 'Canceled', type: 'canceled' },
  { id: 'st-review', name: 'In Review', type: 'started' },
  // Team Ops's own states: a name of another team's state must not match.
  { id: 'st-ops-triage', name: 'Triage', type: 'triage' },
  { id: 'st-ops-done', name: 'Done', type: 'completed' },
];

const TEAMS: FakeTeam[] = [
  {
    id: 'team-eng',
    key: 'ENG',
    name: 'Engineering',
    stateIds: ['st-backlog', 'st-todo', 'st-progress', 'st-review', 'st-done', 'st-canceled'],
  },
  { id: 'team-ops', key: 'OPS', name: 'Operations', stateIds: ['st-ops-triage', 'st-ops-done'] },
];

function issue(
  n: number,
  fields: Partial<FakeIssue> & Pick<FakeIssue, 'stateId' | 'projectId'>,
): FakeIssue {
  const created = new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString();
  return {
    id: `issue-${n}`,
    identifier: `ENG-${n}`,
    teamId: 'team-eng',
    title: `Issue ${n}`,
    description: null,
    priority: 0,
    assigneeId: null,
    labels: [],
    createdAt: created,
    updatedAt: created,
    ...fields,
  };
}

/**
 * A small workspace: projects alpha (label Platform), beta (label Mobile), gamma of team
 * Engineering, and ops of team Operations (its own states, one issue OPS-7); the viewer
 * `user-me` and `user-other`. ENG-3 (Done) blocks ENG-2; ENG-4 is only related.
 */
export function fixtureData(): FakeData {
  return {
    viewerId: 'user-me',
    users: [
      { id: 'user-me', name: 'Me', email: 'me@example.com' },
      { id: 'user-other', name: 'Other', email: 'other@example.com' },
    ],
    states: STATES.map((state) => ({ ...state })),
    teams: TEAMS.map((team) => ({ ...team, stateIds: [...team.stateIds] })),
    projects: [
      {
        id: 'project-alpha',
        slugId: 'alpha1',
        name: 'Alpha',
        labels: ['Platform'],
        teamIds: ['team-eng'],
      },
      {
        id: 'project-beta',
        slugId: 'beta2',
        name: 'Beta',
        labels: ['Mobile'],
        teamIds: ['team-eng'],
      },
      { id: 'project-gamma', slugId: 'gamma3', name: 'Gamma', labels: [], teamIds: ['team-eng'] },
      { id: 'project-ops', slugId: 'ops4', name: 'Ops', labels: [], teamIds: ['team-ops'] },
    ],
    issues: [
      issue(1, {
        stateId: 'st-todo',
        projectId: 'project-alpha',
        priority: 2,
        assigneeId: 'user-me',
        labels: ['Backend', 'Bug'],
        description: 'The login redirect loops.',
      }),
      issue(2, {
        stateId: 'st-progress',
        projectId: 'project-alpha',
        priority: 0,
        assigneeId: 'user-other',
      }),
      issue(3, { stateId: 'st-done', projectId: 'project-alpha', priority: 1 }),
      issue(4, { stateId: 'st-todo', projectId: 'project-beta', priority: 4 }),
      issue(5, { stateId: 'st-todo', projectId: 'project-gamma', priority: 3 }),
      issue(6, { stateId: 'st-backlog', projectId: 'project-alpha' }),
      issue(7, {
        identifier: 'OPS-7',
        stateId: 'st-ops-triage',
        projectId: 'project-ops',
        teamId: 'team-ops',
      }),
    ],
    relations: [
      { id: 'rel-1', type: 'blocks', issueId: 'issue-3', relatedIssueId: 'issue-2' },
      { id: 'rel-2', type: 'related', issueId: 'issue-4', relatedIssueId: 'issue-2' },
    ],
    comments: [],
  };
}

/** `count` more Todo issues in a project of their own (slug `bulk9`), for pagination. */
export function withBulkProject(data: FakeData, count: number): FakeData {
  const project: FakeProject = {
    id: 'project-bulk',
    slugId: 'bulk9',
    name: 'Bulk',
    labels: [],
    teamIds: ['team-eng'],
  };
  const bulk = Array.from({ length: count }, (_, index) =>
    issue(100 + index, { stateId: 'st-todo', projectId: project.id }),
  );
  return { ...data, projects: [...data.projects, project], issues: [...data.issues, ...bulk] };
}
