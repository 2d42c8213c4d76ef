// Debian's chromium, headless, driven by playwright-core (no browser download): the web
// view's browser tests. hack/ensure-chromium.sh installs the package. Each browser gets a
// fresh user-data dir; each page records Content-Security-Policy violations, console errors,
// uncaught page errors and dialogs (alert/confirm/prompt: hostile content must never open
// one), and `assertClean` fails the test on any of them. Screenshots go under
// test-results/screenshots/ (gitignored), the tests' artifacts.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env['LORENZ_CHROMIUM'] ?? '/usr/bin/chromium';
export const SCREENSHOTS = resolve(import.meta.dirname, '../../test-results/screenshots');

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface PageProblems {
  cspViolations: string[];
  consoleErrors: string[];
  pageErrors: string[];
  dialogs: string[];
}

export interface TestBrowser {
  context: BrowserContext;
  /** A new page with its problem collector. */
  newPage(): Promise<{ page: Page; problems: PageProblems }>;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `no chromium at ${CHROMIUM}: run hack/ensure-chromium.sh (Debian: apt-get install chromium), or set LORENZ_CHROMIUM`,
    );
  const userDataDir = mkdtempSync(join(tmpdir(), 'lorenz-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    args: ARGS,
    headless: true,
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    async newPage() {
      const page = await context.newPage();
      const problems: PageProblems = {
        cspViolations: [],
        consoleErrors: [],
        pageErrors: [],
        dialogs: [],
      };
      // The page reports each violation to the test through a binding; a listener added
      // before any of the page's own scripts runs, on every navigation.
      await page.exposeBinding('__lorenzCspViolation', (_source, text: string) => {
        problems.cspViolations.push(text);
      });
      // A string, not a function: this file compiles without the DOM's types.
      await page.addInitScript({
        content: `document.addEventListener('securitypolicyviolation', (event) => {
          window.__lorenzCspViolation(event.violatedDirective + ' blocked ' + (event.blockedURI || '(inline)') + ' at ' + event.sourceFile + ':' + event.lineNumber);
        });`,
      });
      page.on('console', (message) => {
        if (message.type() !== 'error') return;
        const text = message.text();
        // Chromium also logs each CSP violation to the console: counted above, once.
        if (text.includes('Content Security Policy')) problems.cspViolations.push(text);
        else problems.consoleErrors.push(text);
      });
      page.on('pageerror', (error) => problems.pageErrors.push(String(error)));
      page.on('dialog', (dialog) => {
        problems.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
        void dialog.dismiss();
      });
      return { page, problems };
    },
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** Fails with every problem the page recorded; `allowConsole` lists expected console errors (a 403 the test provokes). */
export function assertClean(problems: PageProblems, allowConsole: RegExp[] = []): void {
  const consoleErrors = problems.consoleErrors.filter(
    (text) => !allowConsole.some((re) => re.test(text)),
  );
  const all = [
    ...problems.cspViolations.map((t) => `CSP violation: ${t}`),
    ...consoleErrors.map((t) => `console error: ${t}`),
    ...problems.pageErrors.map((t) => `page error: ${t}`),
    ...problems.dialogs.map((t) => `dialog opened: ${t}`),
  ];
  if (all.length > 0) throw new Error(`the page was not clean:\n${all.join('\n')}`);
}

/** Saves a full-page screenshot under test-results/screenshots/NAME.png; returns the path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
