import { describe, expect, it } from 'vitest';
import { type WorkflowConfig, parseConfig } from '../../../src/workflow/config.js';
import { parseWorkflowContent } from '../../../src/workflow/front-matter.js';
import { failureOfSync } from '../../support/lorenz-errors.js';

const failure = (raw: Record<string, unknown>) => failureOfSync(() => parseConfig(raw));

const DEFAULTS: WorkflowConfig = {
  tracker: {
    kind: 'memory',
    activeStates: ['Todo', 'In Progress'],
    terminalStates: ['Closed', 'Cancelled', 'Canceled', 'Duplicate', 'Done'],
    endpoint: null,
    apiKey: null,
    projectSlug: null,
    projectSlugs: [],
    projectLabels: [],
    assignee: null,
    repository: null,
    stateLabelPrefix: 'lorenz:',
    path: '.lorenz/local',
    idPrefix: 'BOARD-',
    email: null,
    projectKey: null,
    jql: null,
    issues: [],
    issueComments: [],
  },
  polling: { intervalMs: 30_000 },
  workspace: { root: null, isolation: 'per-agent', git: null },
  hooks: {
    afterCreate: null,
    beforeRun: null,
    afterRun: null,
    beforeRemove: null,
    timeoutMs: 60_000,
  },
  agent: {
    kind: 'codex',
    maxConcurrentAgents: 10,
    maxConcurrentAgentsByState: {},
    maxTurns: 20,
    maxRetryBackoffMs: 300_000,
    ensembleSize: 1,
    skills: [],
    approvals: null,
    budget: null,
  },
  agents: {
    turnTimeoutMs: 3_600_000,
    stallTimeoutMs: 300_000,
    responseTimeoutMs: 60_000,
    bridges: {
      claude: { bridgeCommand: 'claude-agent-acp', env: {} },
      codex: { bridgeCommand: 'codex-acp', env: {} },
    },
  },
  worker: { sshHosts: [], sshTimeoutMs: 60_000, maxConcurrentAgentsPerHost: null },
  review: null,
};

describe('parseConfig defaults', () => {
  it('gives every reference default for empty front matter, with no warnings', () => {
    expect(parseConfig({})).toEqual({ config: DEFAULTS, warnings: [] });
  });

  it('treats an empty section (`hooks:` with nothing under it) as all defaults', () => {
    expect(parseConfig({ hooks: null, agent: null }).config).toEqual(DEFAULTS);
  });

  it('does not share default lists between configs', () => {
    const first = parseConfig({}).config;
    first.tracker.activeStates.push('Mutated');
    first.agent.skills.push('x');
    expect(parseConfig({}).config).toEqual(DEFAULTS);
  });

  it('treats a blank hook command as no hook', () => {
    expect(parseConfig({ hooks: { after_run: '  \n' } }).config.hooks.afterRun).toBeNull();
  });
});

describe('parseConfig values', () => {
  it('maps every snake_case key to its camelCase field', () => {
    const { config, warnings } = parseConfig({
      tracker: {
        kind: 'linear',
        active_states: ['Todo'],
        terminal_states: ['Done'],
        endpoint: 'https://example.test/graphql',
        api_key: '$LINEAR_API_KEY',
        project_slug: 'acme',
        assignee: 'me',
        repository: 'acme/app',
        state_label_prefix: 'gh-state/',
        path: '~/board',
        id_prefix: 'ENG-',
        email: 'me@example.test',
        project_key: 'ENG',
        jql: 'labels = agent',
      },
      polling: { interval_ms: 5000 },
      workspace: {
        root: '~/ws',
        isolation: 'per-agent',
        git: {
          repo: 'acme/web',
          repo_template: 'https://git.example.test/{{ repo }}.git',
          branch: 'fix/{{ issue.identifier }}',
          protected: ['release/*'],
          depth: '10',
          setup_binaries: ['pnpm'],
          user_name: 'Bot',
          user_email: 'bot@example.test',
        },
      },
      hooks: {
        after_create: 'a',
        before_run: 'b',
        after_run: 'c',
        before_remove: 'd',
        timeout_ms: 604_800_000,
      },
      agent: {
        kind: 'claude',
        max_concurrent_agents: 2,
        max_concurrent_agents_by_state: { ' In Progress ': 1 },
        max_turns: 4,
        max_retry_backoff_ms: 1000,
        ensemble_size: 100,
        skills: ['./s'],
      },
      agents: { turn_timeout_ms: 10, stall_timeout_ms: -1, response_timeout_ms: 20 },
      worker: {
        ssh_hosts: ['h1'],
        ssh_timeout_ms: 7,
        max_concurrent_agents_per_host: 3,
      },
    });
    expect(warnings).toEqual([]);
    expect(config).toEqual({
      ...DEFAULTS,
      tracker: {
        kind: 'linear',
        activeStates: ['Todo'],
        terminalStates: ['Done'],
        endpoint: 'https://example.test/graphql',
        apiKey: '$LINEAR_API_KEY',
        projectSlug: 'acme',
        projectSlugs: [],
        projectLabels: [],
        assignee: 'me',
        repository: 'acme/app',
        stateLabelPrefix: 'gh-state/',
        path: '~/board',
        idPrefix: 'ENG-',
        email: 'me@example.test',
        projectKey: 'ENG',
        jql: 'labels = agent',
        issues: [],
        issueComments: [],
      },
      polling: { intervalMs: 5000 },
      workspace: {
        root: '~/ws',
        isolation: 'per-agent',
        git: {
          repo: 'acme/web',
          repoTemplate: 'https://git.example.test/{{ repo }}.git',
          branch: 'fix/{{ issue.identifier }}',
          protected: ['release/*'],
          depth: 10,
          setupBinaries: ['pnpm'],
          userName: 'Bot',
          userEmail: 'bot@example.test',
        },
      },
      hooks: {
        afterCreate: 'a',
        beforeRun: 'b',
        afterRun: 'c',
        beforeRemove: 'd',
        timeoutMs: 604_800_000,
      },
      agent: {
        kind: 'claude',
        maxConcurrentAgents: 2,
        maxConcurrentAgentsByState: { 'in progress': 1 },
        maxTurns: 4,
        maxRetryBackoffMs: 1000,
        ensembleSize: 100,
        skills: ['./s'],
        approvals: null,
        budget: null,
      },
      agents: { ...DEFAULTS.agents, turnTimeoutMs: 10, stallTimeoutMs: -1, responseTimeoutMs: 20 },
      worker: { sshHosts: ['h1'], sshTimeoutMs: 7, maxConcurrentAgentsPerHost: 3 },
      review: null,
    });
  });

  it('normalizes inline memory issues', () => {
    const { config } = parseConfig({
      tracker: {
        kind: 'memory',
        issues: [{ identifier: 'ENG-1', title: 'Fix', labels: [' Needs-Tests '] }],
      },
    });
    expect(config.tracker.issues).toEqual([
      expect.objectContaining({
        identifier: 'ENG-1',
        description: null,
        labels: ['needs-tests'],
        assigned_to_worker: true,
      }),
    ]);
  });

  it('reads agent bridges: defaults, overrides, env as text, custom kinds', () => {
    const { config } = parseConfig({
      agent: { kind: 'scripted' },
      agents: {
        codex: { bridge_command: 'my-codex', env: { A: 'x', N: 1, B: true } },
        scripted: { bridge_command: 'node bridge.mjs' },
      },
    });
    expect(config.agents.bridges).toEqual({
      claude: { bridgeCommand: 'claude-agent-acp', env: {} },
      codex: { bridgeCommand: 'my-codex', env: { A: 'x', N: '1', B: 'true' } },
      scripted: { bridgeCommand: 'node bridge.mjs', env: {} },
    });
    expect(config.agent.kind).toBe('scripted');
  });
});

describe('hook aliases', () => {
  // Each hook key in both spellings, with a value it takes.
  const spellings = [
    { snake: 'after_create', camel: 'afterCreate', value: 'echo a' },
    { snake: 'before_run', camel: 'beforeRun', value: 'echo b' },
    { snake: 'after_run', camel: 'afterRun', value: 'echo c' },
    { snake: 'before_remove', camel: 'beforeRemove', value: 'echo d' },
    { snake: 'timeout_ms', camel: 'timeoutMs', value: 1234 },
  ] as const;

  it.each(spellings)('accepts hooks.$camel', ({ camel, value }) => {
    const { config, warnings } = parseConfig({ hooks: { [camel]: value } });
    expect(config.hooks[camel]).toBe(value);
    expect(warnings).toEqual([]);
  });

  it.each(spellings)('rejects hooks.$snake given twice', ({ snake, camel, value }) => {
    const error = failure({ hooks: { [snake]: value, [camel]: value } });
    expect(error.code).toBe('invalid_workflow_config');
    expect(error.message).toBe(
      `hooks.${snake}: given twice (as ${snake} and ${camel}); keep one spelling`,
    );
  });

  it('names the alias as written when its value is invalid', () => {
    expect(failure({ hooks: { timeoutMs: 0 } }).message).toBe(
      'hooks.timeoutMs: must be a positive integer no greater than 604800000',
    );
  });
});

describe('unknown keys', () => {
  it('warns with the full key path and still parses', () => {
    const { config, warnings } = parseConfig({
      server: { port: 1 },
      tracker: { kind: 'memory', foo: 1, activeStates: ['x'] },
      workspace: { rootDir: '/x', Root: '/y' },
      hooks: { on_start: 'x' },
      agent: { maxTurns: 3 },
      agents: { codex: { bridge_command: 'c', extra: 1 } },
      worker: { hosts: [] },
      polling: { intervalMs: 5 },
    });
    expect(warnings).toEqual([
      'unknown key server',
      'unknown key tracker.foo',
      'unknown key tracker.activeStates',
      'unknown key polling.intervalMs',
      'unknown key workspace.rootDir',
      'unknown key workspace.Root',
      'unknown key hooks.on_start',
      'unknown key agent.maxTurns',
      'unknown key agents.codex.extra',
      'unknown key worker.hosts',
    ]);
    // Not aliases: the camelCase spellings outside hooks change nothing.
    expect(config.tracker.activeStates).toEqual(DEFAULTS.tracker.activeStates);
    expect(config.agent.maxTurns).toBe(20);
    expect(config.polling.intervalMs).toBe(30_000);
    expect(config.workspace.root).toBeNull();
  });
});

describe('keys named like Object.prototype members', () => {
  it('are plain keys, never inherited values', () => {
    const raw = parseWorkflowContent(
      '---\nhooks:\n  constructor: x\n  toString: y\n  __proto__: z\nagents:\n  constructor:\n    bridge_command: c\n---\n',
    ).frontMatter;
    const { config, warnings } = parseConfig(raw);
    expect(warnings).toEqual([
      'unknown key hooks.constructor',
      'unknown key hooks.toString',
      'unknown key hooks.__proto__',
    ]);
    expect(Object.keys(config.agents.bridges)).toEqual(['claude', 'codex', 'constructor']);
    expect(config.agents.bridges.constructor).toEqual({ bridgeCommand: 'c', env: {} });
    expect(failure({ agent: { kind: 'toString' } }).message).toMatch(/^agent\.kind: must name/);
    expect(failure({ agents: { toString: {} } }).message).toBe(
      'agents.toString.bridge_command: must be a non-empty string',
    );
  });
});

describe('integer settings written as quoted numbers', () => {
  it('are read as the numbers, as Lorenz reads them', () => {
    const { config } = parseConfig({
      polling: { interval_ms: '5000' },
      hooks: { timeout_ms: '60000' },
      agent: {
        max_concurrent_agents: ' 3 ',
        max_turns: '5',
        max_retry_backoff_ms: '+1000',
        ensemble_size: '2',
      },
      agents: { turn_timeout_ms: '10', stall_timeout_ms: '-1', response_timeout_ms: '20' },
      worker: { ssh_timeout_ms: '7' },
    });
    expect(config.polling.intervalMs).toBe(5000);
    expect(config.hooks.timeoutMs).toBe(60_000);
    expect(config.agent).toMatchObject({
      maxConcurrentAgents: 3,
      maxTurns: 5,
      maxRetryBackoffMs: 1000,
      ensembleSize: 2,
    });
    expect(config.agents).toMatchObject({ turnTimeoutMs: 10, stallTimeoutMs: -1 });
    expect(config.agents).toMatchObject({ responseTimeoutMs: 20 });
    expect(config.worker.sshTimeoutMs).toBe(7);
  });

  it('are read from WORKFLOW.md front matter too (the camelCase alias included)', () => {
    const { frontMatter } = parseWorkflowContent(
      '---\nagent:\n  max_turns: "5"\nhooks:\n  timeoutMs: "60000"\n---\nbody\n',
    );
    const { config } = parseConfig(frontMatter);
    expect(config.agent.maxTurns).toBe(5);
    expect(config.hooks.timeoutMs).toBe(60_000);
  });
});

describe('invalid values name the key path and the rule', () => {
  const positive = 'must be a positive integer';
  // Durations in ms: what a Node timer can hold (2³¹−1); past it a timer fires after 1 ms.
  const duration = 'must be a positive integer no greater than 2147483647';
  it.each([
    [{ tracker: 'linear' }, 'tracker: must be a map'],
    [{ hooks: ['a'] }, 'hooks: must be a map'],
    [{ tracker: { kind: '' } }, 'tracker.kind: must be a non-empty string'],
    [{ tracker: { kind: 3 } }, 'tracker.kind: must be a non-empty string'],
    [{ tracker: { active_states: 'Todo' } }, 'tracker.active_states: must be a list of strings'],
    [{ tracker: { terminal_states: ['Done', 1] } }, 'tracker.terminal_states[1]: must be a string'],
    [{ tracker: { endpoint: 5 } }, 'tracker.endpoint: must be a string or null'],
    [{ tracker: { api_key: [] } }, 'tracker.api_key: must be a string or null'],
    [{ tracker: { project_slug: {} } }, 'tracker.project_slug: must be a string or null'],
    [{ tracker: { assignee: 1 } }, 'tracker.assignee: must be a string or null'],
    [{ tracker: { repository: true } }, 'tracker.repository: must be a string or null'],
    [{ tracker: { issues: {} } }, 'tracker.issues: must be a list of issues'],
    [{ polling: { interval_ms: 0 } }, `polling.interval_ms: ${duration}`],
    [{ polling: { interval_ms: 'soon' } }, `polling.interval_ms: ${duration}`],
    [{ polling: { interval_ms: '' } }, `polling.interval_ms: ${duration}`],
    [{ polling: { interval_ms: '1.5' } }, `polling.interval_ms: ${duration}`],
    [{ polling: { interval_ms: '1e3' } }, `polling.interval_ms: ${duration}`],
    [{ polling: { interval_ms: '0x10' } }, `polling.interval_ms: ${duration}`],
    [{ polling: { interval_ms: '0' } }, `polling.interval_ms: ${duration}`],
    [{ hooks: { timeout_ms: '604800001' } }, /^hooks\.timeout_ms: must be a positive integer/],
    [{ agent: { max_turns: '5 turns' } }, `agent.max_turns: ${positive}`],
    [{ agent: { ensemble_size: '101' } }, 'agent.ensemble_size: must be an integer from 1 to 100'],
    [{ workspace: { root: 1 } }, 'workspace.root: must be a string or null'],
    [
      { workspace: { isolation: 'shared' } },
      'workspace.isolation: must be one of "per-agent", "none"',
    ],
    [{ hooks: { after_create: 1 } }, 'hooks.after_create: must be a string or null'],
    [{ hooks: { before_run: [] } }, 'hooks.before_run: must be a string or null'],
    [{ hooks: { after_run: false } }, 'hooks.after_run: must be a string or null'],
    [{ hooks: { before_remove: {} } }, 'hooks.before_remove: must be a string or null'],
    [
      { hooks: { timeout_ms: 0 } },
      'hooks.timeout_ms: must be a positive integer no greater than 604800000',
    ],
    [
      { hooks: { timeout_ms: -5 } },
      'hooks.timeout_ms: must be a positive integer no greater than 604800000',
    ],
    [
      { hooks: { timeout_ms: 1.5 } },
      'hooks.timeout_ms: must be a positive integer no greater than 604800000',
    ],
    [
      { hooks: { timeout_ms: 604_800_001 } },
      'hooks.timeout_ms: must be a positive integer no greater than 604800000',
    ],
    [{ agent: { kind: '  ' } }, 'agent.kind: must be a non-empty string'],
    [
      { agent: { kind: 'gemini' } },
      'agent.kind: must name an agent kind with a bridge (claude, codex); got "gemini"',
    ],
    [{ agent: { max_concurrent_agents: 0 } }, `agent.max_concurrent_agents: ${positive}`],
    [{ agent: { max_turns: 2.5 } }, `agent.max_turns: ${positive}`],
    [{ agent: { max_retry_backoff_ms: -1 } }, `agent.max_retry_backoff_ms: ${duration}`],
    [{ agent: { ensemble_size: 0 } }, 'agent.ensemble_size: must be an integer from 1 to 100'],
    [{ agent: { ensemble_size: 101 } }, 'agent.ensemble_size: must be an integer from 1 to 100'],
    [{ agent: { skills: 'a' } }, 'agent.skills: must be a list of strings'],
    [{ agents: { turn_timeout_ms: 0 } }, `agents.turn_timeout_ms: ${duration}`],
    [
      { agents: { stall_timeout_ms: 0.5 } },
      'agents.stall_timeout_ms: must be an integer no greater than 2147483647',
    ],
    [{ agents: { response_timeout_ms: 'soon' } }, `agents.response_timeout_ms: ${duration}`],
    [{ agents: { codex: 'codex-acp' } }, 'agents.codex: must be a map'],
    [
      { agents: { codex: { bridge_command: '' } } },
      'agents.codex.bridge_command: must be a non-empty string',
    ],
    [{ agents: { scripted: {} } }, 'agents.scripted.bridge_command: must be a non-empty string'],
    [
      { agents: { claude: { env: ['A=1'] } } },
      'agents.claude.env: must be a map of names to strings',
    ],
    [
      { agents: { claude: { env: { A: null } } } },
      'agents.claude.env.A: must be a map of names to strings',
    ],
    [{ worker: { ssh_hosts: [1] } }, 'worker.ssh_hosts[0]: must be a string'],
    [
      { worker: { ssh_hosts: ['ok', 'h:99999'] } },
      'worker.ssh_hosts[1]: must be [user@]host[:port]; the port is not 1-65535',
    ],
    [
      { worker: { ssh_hosts: ['a b@h'] } },
      'worker.ssh_hosts[0]: must be [user@]host[:port]; the user is not a login name',
    ],
    [
      { worker: { ssh_hosts: ['host_name'] } },
      'worker.ssh_hosts[0]: must be [user@]host[:port]; "host_name" is not a host name',
    ],
    [
      { worker: { max_concurrent_agents_per_host: 0 } },
      'worker.max_concurrent_agents_per_host: must be a positive integer',
    ],
    ...(
      [
        ['polling', 'interval_ms'],
        ['agent', 'max_retry_backoff_ms'],
        ['agents', 'turn_timeout_ms'],
        ['agents', 'response_timeout_ms'],
      ] as const
    ).map(([section, key]): [Record<string, unknown>, string] => [
      { [section]: { [key]: 2_147_483_648 } },
      `${section}.${key}: ${duration}`,
    ]),
    [
      { agents: { stall_timeout_ms: 2_147_483_648 } },
      'agents.stall_timeout_ms: must be an integer no greater than 2147483647',
    ],
    [
      { tracker: { issues: [{ identifier: 'A', title: 3 }] } },
      'tracker.issues[0]: key "title" must be a string, not a whole number',
    ],
    [{ tracker: { issues: [{ title: 'x' }] } }, 'tracker.issues[0]: key "identifier" is required'],
  ])('%j', (raw, message) => {
    const error = failure(raw);
    expect(error.code).toBe('invalid_workflow_config');
    if (typeof message === 'string') expect(error.message).toBe(message);
    else expect(error.message).toMatch(message);
  });
});

// The one setting with a code of its own (docs/cli.md's error table promises it).
describe('worker.ssh_timeout_ms', () => {
  it.each([0, -1, 'abc', 1.5, 2_147_483_648, null])('%j: invalid_ssh_timeout', (value) => {
    const error = failure({ worker: { ssh_timeout_ms: value } });
    expect(error.code).toBe('invalid_ssh_timeout');
    expect(error.message).toBe(
      'worker.ssh_timeout_ms: must be a positive integer no greater than 2147483647',
    );
  });
});

describe('workspace.isolation = "none"', () => {
  it('is allowed without hooks (timeout_ms alone is not a hook)', () => {
    const { config } = parseConfig({ workspace: { isolation: 'none' }, hooks: { timeout_ms: 5 } });
    expect(config.workspace.isolation).toBe('none');
  });

  it.each([
    [{ after_run: 'x' }, 'after_run'],
    [{ before_remove: 'x', after_create: 'y' }, 'after_create, before_remove'],
    [
      { beforeRemove: 'a', afterRun: 'b', beforeRun: 'c', afterCreate: 'd' },
      'after_create, before_run, after_run, before_remove',
    ],
  ])('rejects hooks %j with the exact message', (hooks, names) => {
    const error = failure({ workspace: { isolation: 'none' }, hooks });
    expect(error.code).toBe('invalid_workflow_config');
    expect(error.message).toBe(
      `workspace.isolation = "none" does not support hooks; remove ${names}`,
    );
  });
});
