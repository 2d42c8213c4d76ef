// The warm-up's objects (src/controller/warm/objects.ts): a full warm-up prepares the tree on a
// claim of its own; a head check (--unless-commit) prepares nothing, so no claim is provisioned
// for it.
import { describe, expect, it } from 'vitest';
import { createWarmUpObjects } from '../../../../src/controller/warm/objects.js';
import { FakeKubeClient, fakeWorkflowConfigLoader } from '../../../support/fakes/controller.js';
import {
  SNAPSHOT,
  claimedWorkspace,
  workflow,
  workflowText,
} from '../../../support/fakes/objects.js';

const make = async (unlessCommit: string | undefined) => {
  const client = new FakeKubeClient();
  const runnable = await fakeWorkflowConfigLoader({ [SNAPSHOT]: workflowText() }).load(
    'ns',
    SNAPSHOT,
  );
  await createWarmUpObjects({
    client,
    workflow: workflow({ workspace: { ...claimedWorkspace('fast-ssd').workspace, warm: {} } }),
    runnable,
    name: 'wf-warm-2',
    configDigest: 'sha256:cfg',
    unlessCommit,
    operatorImage: 'ghcr.io/lorenz-dev/lorenz:0.1.0',
  });
  return client.summaries();
};

describe('the warm-up objects', () => {
  it('a full warm-up: its inputs and claim, then its Pod', async () => {
    expect(await make(undefined)).toEqual([
      'POST configmaps/wf-warm-2',
      'POST persistentvolumeclaims/wf-warm-2',
      'POST pods/wf-warm-2',
    ]);
  });

  it('a head check: its inputs, then its Pod, and no claim', async () => {
    expect(await make('c'.repeat(40))).toEqual([
      'POST configmaps/wf-warm-2',
      'POST pods/wf-warm-2',
    ]);
  });
});
