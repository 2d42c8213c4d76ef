// One real node per name on this machine (hack/lib/node-lock.sh, taken by hack/real-node.sh
// up and given back by down): checkouts that start the same node at once queue instead of
// killing each other's containers, and a lock whose owner is gone is taken over. Real bash
// processes contend for a lock in a scratch folder.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, scratchDir } from './scratch.js';

const scratch = scratchDir('lorenz-node-lock-');
const lib = join(repoRoot, 'hack/lib/node-lock.sh');
let cases = 0;

interface Contender {
  pid: number;
  /** Its stderr so far. */
  stderr: () => string;
  done: Promise<{ status: number | null; stderr: string }>;
}

/** A bash process that sources the lock library and runs `script`, with its own lock dir. */
function bash(lockDir: string, script: string, env: Record<string, string> = {}): Contender {
  const child = spawn(
    'bash',
    ['-c', `set -euo pipefail; source ${JSON.stringify(lib)}; ${script}`],
    {
      env: { ...process.env, LORENZ_NODE_LOCK_DIR: lockDir, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const done = new Promise<{ status: number | null; stderr: string }>((resolve) =>
    child.on('close', (status) => resolve({ status, stderr })),
  );
  return { pid: child.pid ?? 0, stderr: () => stderr, done };
}

function freshLockDir(): string {
  cases += 1;
  const dir = join(scratch, `case-${cases}`);
  mkdirSync(dir);
  return dir;
}

const lockFile = (lockDir: string, name: string) => join(lockDir, `real-node-${name}.lock`);
const owner = (lockDir: string, name: string) =>
  readFileSync(lockFile(lockDir, name), 'utf8').match(/^dir=(.*)$/m)?.[1];

async function until(condition: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('the real node lock (hack/lib/node-lock.sh)', () => {
  it('makes a second start wait, saying who holds the node, until the first gives it back', async () => {
    const locks = freshLockDir();
    const gate = join(locks, 'release-first');
    const first = bash(
      locks,
      `node_lock_acquire n1 /state/first $$ /checkout/a
       until [[ -f ${gate} ]]; do sleep 0.1; done
       node_lock_release n1 /state/first`,
    );
    await until(() => existsSync(lockFile(locks, 'n1')), 'the first holds the lock');
    const second = bash(locks, 'node_lock_acquire n1 /state/second $$ /checkout/b');
    await until(() => second.stderr().includes('waiting'), 'the second says it waits');
    // Still the first's: the second is waiting.
    expect(owner(locks, 'n1')).toBe('/state/first');
    writeFileSync(gate, '');
    expect(await first.done).toMatchObject({ status: 0 });
    const result = await second.done;
    expect(result.status).toBe(0);
    expect(result.stderr).toContain(
      `[real-node] node n1 is in use by pid ${first.pid} (/checkout/a, state /state/first): waiting for it to go down`,
    );
    expect(owner(locks, 'n1')).toBe('/state/second');
  });

  it('gives up after LORENZ_NODE_LOCK_WAIT seconds, leaving the holder its node', async () => {
    const locks = freshLockDir();
    const holder = bash(locks, 'node_lock_acquire n2 /state/holder $$ /checkout/a; sleep 30');
    try {
      await until(() => existsSync(lockFile(locks, 'n2')), 'the holder holds the lock');
      const started = Date.now();
      const late = await bash(locks, 'node_lock_acquire n2 /state/late $$ /checkout/b', {
        LORENZ_NODE_LOCK_WAIT: '2',
      }).done;
      expect(late.status).toBe(1);
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(late.stderr).toContain(
        `[real-node] error: node n2 is still held by pid ${holder.pid} (/checkout/a, state /state/holder) after 2 s; gave up (LORENZ_NODE_LOCK_WAIT)`,
      );
      expect(owner(locks, 'n2')).toBe('/state/holder');
    } finally {
      process.kill(holder.pid);
      await holder.done;
    }
  });

  it('takes over a lock whose owner is gone, stopping what that owner left first', async () => {
    const locks = freshLockDir();
    const gone = bash(locks, 'node_lock_acquire n3 /state/gone $$ /checkout/a');
    expect(await gone.done).toMatchObject({ status: 0 });
    expect(owner(locks, 'n3')).toBe('/state/gone');
    const stopped = join(locks, 'stopped');
    const next = await bash(
      locks,
      `node_lock_on_stale() { echo "$1" >> ${stopped}; }
       node_lock_acquire n3 /state/next $$ /checkout/b`,
      { LORENZ_NODE_LOCK_WAIT: '5' },
    ).done;
    expect(next.status).toBe(0);
    expect(next.stderr).toBe(
      `[real-node] node n3: its lock's owner (pid ${gone.pid}, /checkout/a) is gone; stopping what it left in /state/gone and taking the node over\n`,
    );
    expect(readFileSync(stopped, 'utf8')).toBe('/state/gone\n');
    expect(owner(locks, 'n3')).toBe('/state/next');
  });

  it('does not take a live process with a recycled pid for the owner', async () => {
    const locks = freshLockDir();
    // This test's own pid, live, but not started when the lock says its owner was.
    writeFileSync(
      lockFile(locks, 'n4'),
      `pid=${process.pid}\nstart=1\ndir=/state/old\ncheckout=/checkout/a\n`,
    );
    const next = await bash(
      locks,
      'node_lock_on_stale() { :; }; node_lock_acquire n4 /state/next $$ /checkout/b',
      { LORENZ_NODE_LOCK_WAIT: '5' },
    ).done;
    expect(next.status).toBe(0);
    expect(next.stderr).toContain('is gone; stopping what it left in /state/old');
    expect(owner(locks, 'n4')).toBe('/state/next');
  });

  it('lets one of many contenders at a time hold the node', async () => {
    const locks = freshLockDir();
    const log = join(locks, 'log');
    const contenders = [1, 2, 3, 4].map((i) =>
      bash(
        locks,
        `node_lock_acquire n5 /state/${i} $$ /checkout/${i}
         echo "in ${i}" >> ${log}; sleep 0.3; echo "out ${i}" >> ${log}
         node_lock_release n5 /state/${i}`,
      ),
    );
    const results = await Promise.all(contenders.map((c) => c.done));
    expect(results.map((r) => r.status)).toEqual([0, 0, 0, 0]);
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(8);
    for (let i = 0; i < 8; i += 2) {
      expect(lines[i + 1]).toBe(lines[i]!.replace('in', 'out'));
    }
    expect(existsSync(lockFile(locks, 'n5'))).toBe(false);
  });

  it("leaves another live owner's node alone on down (hack/real-node.sh down)", async () => {
    const locks = freshLockDir();
    const name = `lorenz-lock-test-${process.pid}`;
    const holder = bash(locks, `node_lock_acquire ${name} /state/holder $$ /checkout/a; sleep 30`);
    try {
      await until(() => existsSync(lockFile(locks, name)), 'the holder holds the lock');
      const mine = join(locks, 'mine');
      mkdirSync(mine);
      const down = spawnSync(join(repoRoot, 'hack/real-node.sh'), ['down', mine], {
        encoding: 'utf8',
        env: { ...process.env, LORENZ_NODE_LOCK_DIR: locks, LORENZ_NODE_NAME: name },
      });
      expect(down.status).toBe(0);
      expect(down.stderr).toBe(
        `[real-node] node/${name} is held by pid ${holder.pid} (state /state/holder): stopping only what ${mine} started\n[real-node] down\n`,
      );
      expect(owner(locks, name)).toBe('/state/holder');
    } finally {
      process.kill(holder.pid);
      await holder.done;
    }
  });
});
