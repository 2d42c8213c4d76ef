import type { Liquid } from 'liquidjs';

let systemLocale: string | undefined;

/** The machine's default locale, as liquidjs takes it when none is given. */
function defaultLocale(): string {
  return (systemLocale ??= new Intl.DateTimeFormat().resolvedOptions().locale || 'en-US');
}

/**
 * Options for `new Liquid` that skip its locale probe, and `deferLocale` to call on the engine.
 * The probe (`Intl.DateTimeFormat()`) loads ICU's date data: ≈ 15 ms of every start, for a
 * value only the `date` filter reads. Deferred, it is the same locale, read at the first
 * date filter; and a startup snapshot, which builds the engines, does not keep the build
 * machine's.
 */
export const DEFERRED_LOCALE = { locale: 'und' } as const;

export function deferLocale(engine: Liquid): Liquid {
  // liquidjs reads `options.locale` of the engine at each `date` (parseDate), never copies it.
  Object.defineProperty(engine.options, 'locale', {
    get: defaultLocale,
    enumerable: true,
    configurable: true,
  });
  return engine;
}
