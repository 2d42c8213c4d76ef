// The read API's ranges: since/until on the runs, from/to on the usage; either end may be
// left out, and an end before its start is a 400 naming the later parameter.
import { describe, expect, it } from 'vitest';
import { paramsOf, runQueryOf, usageQueryOf } from '../../../src/server/query.js';

const params = (search: string) =>
  paramsOf(new URL(`http://lorenz.test/api?${search}`), ['since', 'until', 'from', 'to']);

describe('ranges of the read API', () => {
  it('takes a run range, either end alone, or both in order', () => {
    // Times are kept as UTC with milliseconds, so that they compare as text.
    const at = '2026-01-02T10:00:00.000Z';
    expect(runQueryOf(params('since=2026-01-02T11:00:00%2B01:00')).query).toEqual({ since: at });
    expect(runQueryOf(params('until=2026-01-02T10:00:00Z')).query).toEqual({ until: at });
    expect(
      runQueryOf(params('since=2026-01-02T10:00:00Z&until=2026-01-02T10:00:00Z')).query,
    ).toEqual({ since: at, until: at });
  });

  it('refuses a run range that ends before it starts, naming until', () => {
    expect(() =>
      runQueryOf(params('since=2026-01-02T10:00:00Z&until=2026-01-01T10:00:00Z')),
    ).toThrow(
      expect.objectContaining({
        code: 'invalid_parameter',
        message: expect.stringContaining('until') as unknown,
      }),
    );
  });

  it('takes a usage range in order and refuses one backwards, naming to', () => {
    expect(usageQueryOf(params('from=2026-01-01&to=2026-01-31')).query).toEqual({
      from: '2026-01-01',
      to: '2026-01-31',
    });
    expect(() => usageQueryOf(params('from=2026-01-31&to=2026-01-01'))).toThrow(
      expect.objectContaining({
        code: 'invalid_parameter',
        message: expect.stringContaining('is before from (2026-01-31)') as unknown,
      }),
    );
  });
});
