// What the tracker and code-host stand-ins share beneath their APIs: a clock that moves a
// second a call (every write gets a time later than the one before and than the fixtures'),
// and the test for a JSON object in a request body.

/** A clock that answers `start`, plus one second more at each call. */
export function secondsFrom(start: string): () => Date {
  let tick = 0;
  return () => {
    tick += 1;
    return new Date(Date.parse(start) + tick * 1000);
  };
}

/** A JSON object (not null, not a list). */
export const isMap = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
