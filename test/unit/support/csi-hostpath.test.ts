// The containers tier's hostpath CSI driver (test/support/csi-hostpath) against csi-sanity,
// the kubernetes-csi conformance suite (its Go test, sanity_test.go): the calls the sidecars
// and the kubelet make, with the spec's error codes and idempotency. Its node calls
// bind-mount, so the Go test skips itself, saying so, where it does not run as root.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const run = promisify(execFile);
const driver = join(import.meta.dirname, '../../support/csi-hostpath');

it('passes csi-sanity', async () => {
  // A cold build of the suite (ginkgo, gomega, csi-test) takes a minute or two here.
  const { stdout } = await run('go', ['test', '-count=1', '-v', '.', '-args', '-ginkgo.no-color'], {
    cwd: driver,
    env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=mod' },
    maxBuffer: 64 * 1024 * 1024,
    timeout: 300_000,
  });
  if (process.getuid?.() !== 0) {
    expect(stdout).toContain('--- SKIP: TestSanity');
    console.warn('[unit] csi-sanity skipped: NodePublishVolume bind-mounts, which needs root');
    return;
  }
  expect(stdout).toMatch(/SUCCESS! -- \d+ Passed \| 0 Failed/);
  expect(stdout).toContain('--- PASS: TestSanity');
}, 300_000);
