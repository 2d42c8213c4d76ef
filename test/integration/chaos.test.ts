// The chaos suite's short form (test/chaos; `npm run chaos` is the long form with figures):
// each scenario on a control plane of its own, and every promise checked — no run lost,
// doubled or left unfinished, no hook Event twice, no write by a replica that did not lead.
import { afterEach, describe, expect, it } from 'vitest';
import { startChaosEnv, type ChaosEnv } from '../chaos/env.js';
import { SCENARIOS, type ScenarioName } from '../chaos/scenarios.js';

describe('chaos, short form', () => {
  let env: ChaosEnv | undefined;
  afterEach(async () => {
    await env?.stop();
    env = undefined;
  });

  const play = async (name: ScenarioName) => {
    env = await startChaosEnv();
    const report = await SCENARIOS[name](env, 'short');
    // The figures go to the CI log: a regression shows what moved, not only that it broke.
    console.log(`chaos ${name}:\n  ${report.lines.join('\n  ')}`);
    return report;
  };

  it('controller SIGKILLs mid-load, at failpoints too: nothing lost, doubled or unfinished', async () => {
    const report = await play('kills');
    expect(report.broken).toEqual([]);
    expect(report.figures).toMatchObject({ lost: 0, unfinished: 0, duplicatePods: 0 });
    // 20, and up to 20 more when all had ended before both failpoints fired (a slow machine).
    expect((report.figures as { runs: number }).runs).toBeGreaterThanOrEqual(20);
    // Both worst moments were hit: between inputs and Pod, between Pod end and Finished.
    const { failpointKills } = report.figures as { failpointKills: Record<string, number> };
    expect(Object.keys(failpointKills).sort()).toEqual([
      'before-finished-status',
      'before-pod-create',
    ]);
  }, 420_000);

  it('leader SIGKILLs with two replicas: takeover within 15 s, no write by the non-leader', async () => {
    const report = await play('leader');
    expect(report.broken).toEqual([]);
    const figures = report.figures as { takeoverMs: number[]; writes: number };
    expect(figures.takeoverMs).toHaveLength(3);
    expect(Math.max(...figures.takeoverMs)).toBeLessThanOrEqual(15_000);
    // The check saw the replicas' writes at all (an empty audit log would pass it).
    expect(figures.writes).toBeGreaterThan(50);
  }, 420_000);

  it('kube-apiserver and etcd SIGKILLed mid-load: the controller relists and loses nothing', async () => {
    const report = await play('restarts');
    expect(report.broken).toEqual([]);
    const figures = report.figures as { relists: number; controllerAlive: boolean };
    expect(figures.controllerAlive).toBe(true);
    expect(figures.relists).toBeGreaterThan(0);
  }, 420_000);

  it('node lost mid-run: attempts end NodeLost, retry on the new node, all Finished', async () => {
    const report = await play('node');
    expect(report.broken).toEqual([]);
    expect(report.figures).toMatchObject({ runs: 4, retried: 4, unfinished: 0 });
  }, 420_000);
});
