// Git workspaces end to end: a Workflow with `workspace.git` and spec.git.credentialsSecretRef,
// an IssueRun whose scripted agent commits and pushes. The run Pod clones a private repository
// of the HTTPS git server fixture with the token of the mounted Secret, works on the branch
// the IssueRun stored in its status, and the push lands there. Every git step is an Event, and
// the token appears nowhere: not in an Event, a status or a Pod log.
import { rm } from 'node:fs/promises';
import type { V1EnvVar } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitServer, type GitServer } from '../support/fakes/git-server.js';
import {
  NAMESPACE,
  agentPodTemplate,
  path,
  sharedCa,
  useOperatorEnv,
  type EventView,
} from './operator-harness.js';

const TOKEN = 'ghp_operatorGitToken0123456789ab';
const REPO = 'acme/web';
const BRANCH = 'lorenz/web-1-add-the-greeting';

describe('git workspaces on the operator', () => {
  const env = useOperatorEnv();
  let server: GitServer;
  let shared: string;
  let gitEnv: V1EnvVar[];
  beforeAll(async () => {
    // The fixture serves from this process: started once the control plane is up.
    server = await startGitServer({
      addresses: ['127.0.0.1'],
      users: { 'x-access-token': TOKEN },
    });
    await server.createRepo(REPO, { private: true, files: { 'README.md': 'web\n' } });
    // Run Pods run as uid 65532: the CA must be readable by others.
    ({ dir: shared, gitEnv } = await sharedCa(server.caFile, 'lorenz-git-ca-'));
  });
  afterAll(async () => {
    await server?.close();
    if (shared) await rm(shared, { recursive: true, force: true });
  });

  it('clones with the Secret, pushes the agent commit to the stored branch, and leaks no token', async () => {
    await env.createSecret('git-creds', { '127.0.0.1': TOKEN });
    const text = env
      .workflowText({
        hooks: {
          timeout_ms: 60000,
          // A hook that prints the token: the runner must redact it.
          after_create: 'cat /lorenz/git-credentials/127.0.0.1; git branch --show-current',
        },
        prompt: [
          'Work on {{ issue.identifier }}.',
          '@shell echo hello > greeting.txt && git add greeting.txt && git commit -qm "Add the greeting" && git push -q origin HEAD',
        ].join('\n'),
      })
      .replace('hooks:\n', `workspace:\n  git:\n    repo: ${server.repoUrl(REPO)}\nhooks:\n`);
    await env.createWorkflow('web', text, {
      git: { credentialsSecretRef: { name: 'git-creds' } },
      podTemplate: agentPodTemplate({ env: gitEnv }),
    });
    await env.createIssueRun('web-1', 'web', { identifier: 'WEB-1', title: 'Add the greeting' });
    const run = await env.finished('web-1', 180_000);
    expect(run.status?.phase, JSON.stringify(run.status)).toBe('Succeeded');
    expect(run.status?.git?.branch).toBe(BRANCH);
    // The hook ran in the clone on that branch, and what it printed of the file is redacted.
    const created = run.status?.hooks?.find((hook) => hook.name === 'after_create');
    // (kubectl's --from-literal stores the token without a newline.)
    expect(created?.output).toBe(`[redacted]${BRANCH}`);

    // The agent's commit is on the stored branch of the remote, and only there.
    expect(await server.readFile(REPO, BRANCH, 'greeting.txt')).toBe('hello\n');
    expect(await server.readFile(REPO, 'main', 'greeting.txt')).toBeNull();
    expect(
      server.requests.some(
        (request) => request.user === 'x-access-token' && request.status === 200,
      ),
    ).toBe(true);

    const events = (
      await env.admin.request<{ items: EventView[] }>({ path: path.events })
    ).items.filter((event) => event.regarding.name === 'web-1');
    const git = events.filter((event) => event.reason.startsWith('GitWorkspace'));
    expect(git.map((event) => event.note)).toContainEqual(
      expect.stringMatching(/^clone completed: /),
    );
    // What the attempt pushed: the runner's push record, an Event like every git step.
    expect(git.map((event) => event.note)).toContainEqual(
      `push completed: pushed 1 commit to ${BRANCH}`,
    );
    expect(git.every((event) => event.metadata.name.includes('-git-'))).toBe(true);

    // The token: nowhere in what the cluster shows of the run.
    const dumps = [
      await env.kubectl('get', 'issueruns.lorenz.dev', '-n', NAMESPACE, '-o', 'json'),
      await env.kubectl('get', 'events', '-n', NAMESPACE, '-o', 'json'),
      await env.kubectl('get', 'pods', '-n', NAMESPACE, '-o', 'json'),
      await env.kubectl('get', 'configmaps', '-n', NAMESPACE, '-o', 'json'),
    ];
    for (const pod of await env.runPodNames('web-1')) {
      dumps.push(await env.kubectl('logs', pod, '-n', NAMESPACE, '-c', 'agent'));
    }
    const all = dumps.join('\n');
    // The hook did print the file: what stands in its place is the redaction.
    expect(all).toContain('[redacted]');
    expect(all).toContain(BRANCH);
    expect(all).not.toContain(TOKEN);
  });
});
