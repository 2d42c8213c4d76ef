import { describe, expect, it } from 'vitest';
import {
  defaultArchiveApiAddress,
  splitArchiveApiArgs,
} from '../../../src/cli/controller-command.js';

describe('lorenz controller --archive-api-bind-address', () => {
  it.each([
    [['--archive-api-bind-address', ':9000', '--namespace', 'x'], ':9000', ['--namespace', 'x']],
    [['--archive-api-bind-address=0', '--leader-elect'], '0', ['--leader-elect']],
    [['--namespace', 'x'], undefined, ['--namespace', 'x']],
  ])('takes the flag out of %j, leaving the controller its own', (args, bind, rest) => {
    const split = splitArchiveApiArgs(args);
    expect(split.bindAddress).toBe(bind);
    expect(split.rest).toEqual(rest);
  });

  it('reads --archive-dsn and --kubeconfig without taking them from the controller', () => {
    const args = ['--archive-dsn=sqlite:/a.db', '--kubeconfig', '/k'];
    expect(splitArchiveApiArgs(args)).toEqual({
      bindAddress: undefined,
      dsn: 'sqlite:/a.db',
      kubeconfig: '/k',
      rest: args,
    });
  });

  it('serves on :8091 in a cluster, and not on a laptop', () => {
    expect(defaultArchiveApiAddress({ KUBERNETES_SERVICE_HOST: '10.0.0.1' })).toBe(':8091');
    expect(defaultArchiveApiAddress({})).toBe('0');
  });
});
