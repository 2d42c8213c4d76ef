// The agent's tools against the Linear and GitHub stand-ins (their real wire formats, every
// request checked against the published schemas): a scripted agent in a run Pod comments on
// its own issue and moves it to Done through the controller's gateway; the tracker key stays
// in its Secret and appears in no Pod, status, Event or log.
import { describe, expect, it } from 'vitest';
import {
  NAMESPACE,
  createLinearWorkflow,
  path,
  until,
  useGithubStandIn,
  useLinearStandIn,
  useOperatorEnv,
  type EventView,
} from './operator-harness.js';

const LINEAR_KEY = 'lin_api_T00lsKey8vRk2PmW4tXs9b';
const PROMPT = [
  'Work on {{ issue.identifier }}.',
  '@tool tracker_comment {"body":"done by the agent"}',
  '@tool tracker_update_state {"state":"Done"}',
].join('\n');

describe('agent tools against the tracker stand-ins', () => {
  const linear = useLinearStandIn(LINEAR_KEY);
  const github = useGithubStandIn();
  const env = useOperatorEnv({ toolsBindAddress: '127.0.0.1:0' });

  const toolEvents = async () =>
    (await env.admin.request<{ items: EventView[] }>({ path: path.events })).items.filter(
      (event) => event.reason === 'ToolCalled',
    );

  it('Linear: comments on its issue and moves it to Done', async () => {
    await createLinearWorkflow(
      env,
      'lt',
      { endpoint: linear.url, secretName: 'linear-tools', apiKey: LINEAR_KEY },
      { agent: '  max_concurrent_agents: 1', prompt: PROMPT },
    );
    const issue = await until('the agent to move its Linear issue to Done', async () => {
      const found = linear.data.issues.find((entry) => entry.identifier === 'ENG-1');
      return found?.stateId === 'st-done' ? found : undefined;
    });
    expect(
      linear.data.comments.filter((comment) => comment.issueId === issue.id).map((c) => c.body),
    ).toContain('done by the agent');
    // The gateway records each call after answering it, so its Event can trail the change.
    await until('the state change to be recorded as an Event', async () =>
      (await toolEvents()).some((event) => /^tracker_update_state on .*: ok$/.test(event.note))
        ? true
        : undefined,
    );
    for (const kind of ['pods', 'issueruns.lorenz.dev', 'events', 'configmaps']) {
      expect(await env.kubectl('get', kind, '-n', NAMESPACE, '-o', 'json')).not.toContain(
        LINEAR_KEY,
      );
    }
  });

  it('GitHub: comments on its issue and closes it as Done', async () => {
    await env.createSecret('github-tools', { api_key: github.token });
    await env.createWorkflow(
      'gt',
      {
        trackerKind: 'github',
        tracker: `  endpoint: ${github.url}\n  repository: ${github.repository}`,
        pollingMs: 1000,
        prompt: PROMPT,
      },
      { trackerSecretRef: { name: 'github-tools' } },
    );
    await until('the agent to close its GitHub issue', async () =>
      github.issues.find((entry) => entry.number === 7)?.state === 'closed' ? true : undefined,
    );
    expect(github.comments.map((comment) => comment.body)).toContain('done by the agent');
    expect(github.violations).toEqual([]);
    for (const kind of ['pods', 'issueruns.lorenz.dev', 'events', 'configmaps']) {
      expect(await env.kubectl('get', kind, '-n', NAMESPACE, '-o', 'json')).not.toContain(
        github.token,
      );
    }
  });
});
