import { describe, expect, it } from 'vitest';
import {
  KubeApiError,
  type KubeClient,
  type RequestOptions,
} from '../../../../src/controller/runtime/client.js';
import { createSecretSource } from '../../../../src/controller/webhooks/secrets.js';

function fakeClient(secrets: Record<string, Record<string, string>>) {
  const paths: string[] = [];
  const client: KubeClient = {
    request<T>(options: RequestOptions): Promise<T> {
      paths.push(options.path);
      const name = options.path.split('/').pop() ?? '';
      const data = secrets[name];
      if (!data)
        return Promise.reject(new KubeApiError(404, { reason: 'NotFound' }, 'GET', options.path));
      const encoded = Object.fromEntries(
        Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
      );
      return Promise.resolve({ data: encoded } as T);
    },
    stream: () => Promise.resolve(),
    close: () => {},
  };
  return { client, paths };
}

describe('createSecretSource', () => {
  it('decodes a key and reads each Secret once per ttl', async () => {
    let now = 0;
    const { client, paths } = fakeClient({ hooks: { webhook_secret: 's3cret' } });
    const source = createSecretSource(client, { ttlMs: 1000, now: () => now });
    expect(await source.get('team', 'hooks', 'webhook_secret')).toBe('s3cret');
    expect(await source.get('team', 'hooks', 'other')).toBeUndefined();
    expect(paths).toEqual(['/api/v1/namespaces/team/secrets/hooks']);
    now = 1000;
    await source.get('team', 'hooks', 'webhook_secret');
    expect(paths).toHaveLength(2);
  });

  it('answers undefined for a missing Secret, remembered for the ttl', async () => {
    const { client, paths } = fakeClient({});
    const source = createSecretSource(client, { ttlMs: 1000, now: () => 0 });
    expect(await source.get('team', 'gone', 'webhook_secret')).toBeUndefined();
    expect(await source.get('team', 'gone', 'webhook_secret')).toBeUndefined();
    expect(paths).toHaveLength(1);
  });

  it('does not remember a failed read', async () => {
    let fail = true;
    const { client } = fakeClient({ hooks: { webhook_secret: 's' } });
    const flaky: KubeClient = {
      ...client,
      request: <T>(options: RequestOptions) =>
        fail ? Promise.reject(new Error('connection reset')) : client.request<T>(options),
    };
    const source = createSecretSource(flaky, { ttlMs: 60_000, now: () => 0 });
    await expect(source.get('team', 'hooks', 'webhook_secret')).rejects.toThrow('reset');
    fail = false;
    expect(await source.get('team', 'hooks', 'webhook_secret')).toBe('s');
  });
});
