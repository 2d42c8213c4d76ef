import { describe, expect, it } from 'vitest';
import { COMMAND_HELP } from '../../../../src/cli/command-help.js';
import { CONTROLLER_OPTIONS, parseControllerArgs } from '../../../../src/controller/main.js';

describe('--webhook-bind-address', () => {
  it.each([
    [[], '0'],
    [['--webhook-bind-address', ':8092'], ':8092'],
    [['--webhook-bind-address=127.0.0.1:0'], '127.0.0.1:0'],
  ])('%j → %s', (argv, expected) => {
    expect(parseControllerArgs(argv).webhookBindAddress).toBe(expected);
  });

  it('is off by default (several controllers share a host in tests), and documented', () => {
    expect(CONTROLLER_OPTIONS['webhook-bind-address'].default).toBe('0');
    const help = COMMAND_HELP.controller?.flags?.find((f) => f.name === 'webhook-bind-address');
    expect(help).toMatchObject({ default: '0' });
  });
});
