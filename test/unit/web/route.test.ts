// Every page of the web view has a URL that can be shared, filters included
// (web/src/route.ts): parse and format agree, and unknown paths are not found.
import { describe, expect, it } from 'vitest';
import { parseRoute, runsUrl, runUrl, usageUrl } from '../../../web/src/route.js';
import { eachCase } from '../../support/cases.js';

describe('parseRoute', () => {
  eachCase('%s%s', parseRoute, [
    ['/', '', { page: 'overview' }],
    ['/runs', '', { page: 'runs', filters: {} }],
    [
      '/runs',
      '?namespace=team-a&workflow=board&phase=Failed&reason=AgentFailed&issue=ENG-1&since=2026-01-01&until=2026-02-01&source=archive&bogus=1',
      {
        page: 'runs',
        filters: {
          namespace: 'team-a',
          workflow: 'board',
          phase: 'Failed',
          reason: 'AgentFailed',
          issue: 'ENG-1',
          since: '2026-01-01',
          until: '2026-02-01',
          source: 'archive',
        },
      },
    ],
    ['/runs/', '?phase=', { page: 'runs', filters: {} }],
    ['/runs/team-a/board-eng-1', '', { page: 'run', namespace: 'team-a', name: 'board-eng-1' }],
    [
      '/runs/team-a/board-eng-1',
      '?uid=abc',
      { page: 'run', namespace: 'team-a', name: 'board-eng-1', uid: 'abc' },
    ],
    [
      '/usage',
      '?workflow=board&from=2026-01-01',
      { page: 'usage', filters: { workflow: 'board', from: '2026-01-01' } },
    ],
    ['/runs/a/b/c', '', { page: 'not_found', path: '/runs/a/b/c' }],
    ['/runs/%E0%A4%A/x', '', { page: 'not_found', path: '/runs/%E0%A4%A/x' }],
    ['/elsewhere', '', { page: 'not_found', path: '/elsewhere' }],
  ]);

  it.each([
    runsUrl({ namespace: 'team a', issue: 'ENG-1&x=1' }),
    runUrl('team-a', 'run/with?odd#chars', 'uid-1'),
    usageUrl({ namespace: 'n', to: '2026-02-01' }),
  ])('formatted URL %s parses back to its values', (url) => {
    const parsed = new URL(url, 'http://x');
    const route = parseRoute(parsed.pathname, parsed.search);
    expect(route.page).not.toBe('not_found');
    expect(JSON.stringify(route)).not.toContain('%');
  });

  it('runUrl round-trips a name with reserved characters', () => {
    const parsed = new URL(runUrl('ns', 'a/b?c', 'u'), 'http://x');
    expect(parseRoute(parsed.pathname, parsed.search)).toEqual({
      page: 'run',
      namespace: 'ns',
      name: 'a/b?c',
      uid: 'u',
    });
  });
});
