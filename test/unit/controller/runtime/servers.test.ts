import { afterEach, describe, expect, it } from 'vitest';
import { Registry, Counter } from 'prom-client';
import {
  parseBindAddress,
  startHealthServer,
  startMetricsServer,
  type BoundServer,
  type Check,
} from '../../../../src/controller/runtime/servers.js';
import { eachCase } from '../../../support/cases.js';

const servers: BoundServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

describe('parseBindAddress', () => {
  eachCase('%s', parseBindAddress, [
    [':8080', { host: '0.0.0.0', port: 8080 }],
    ['127.0.0.1:0', { host: '127.0.0.1', port: 0 }],
    ['[::1]:9440', { host: '::1', port: 9440 }],
    ['0', undefined],
  ]);

  it.each(['8080', 'host:http', ':70000'])('rejects %s', (input) => {
    expect(() => parseBindAddress(input)).toThrow(/bind address/);
  });
});

describe('probe and metrics servers', () => {
  it('answers /healthz and /readyz from the checks, naming what failed', async () => {
    let synced = false;
    const readyz = new Map<string, Check>([
      ['informers', () => (synced ? undefined : 'not synced: pods')],
    ]);
    const server = (await startHealthServer('127.0.0.1:0', {
      healthz: new Map([['ping', () => undefined]]),
      readyz,
    }))!;
    servers.push(server);
    const base = `http://127.0.0.1:${server.address.port}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const notReady = await fetch(`${base}/readyz`);
    expect(notReady.status).toBe(500);
    expect(await notReady.text()).toBe('[-]informers failed: not synced: pods\n');
    synced = true;
    expect(await (await fetch(`${base}/readyz`)).text()).toBe('ok\n');
    expect((await fetch(`${base}/other`)).status).toBe(404);
  });

  it('serves the registry in the Prometheus text format on /metrics', async () => {
    const registry = new Registry();
    new Counter({
      name: 'workqueue_adds_total',
      help: 'adds',
      labelNames: ['name'],
      registers: [registry],
    }).inc({
      name: 'issueruns',
    });
    const server = (await startMetricsServer('127.0.0.1:0', registry))!;
    servers.push(server);
    const response = await fetch(`http://127.0.0.1:${server.address.port}/metrics`);
    expect(response.headers.get('content-type')).toContain('text/plain');
    expect(await response.text()).toContain('workqueue_adds_total{name="issueruns"} 1');
  });

  it('does not listen for the address 0', async () => {
    expect(await startMetricsServer('0', new Registry())).toBeUndefined();
  });
});
