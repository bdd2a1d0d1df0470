/**
 * Headless Chromium for the browser tests: a Chromium already on the machine (`CHROMIUM_PATH`,
 * Debian's `/usr/bin/chromium`, `chromium` on PATH, or a Playwright browser) driven by playwright-core, with a
 * fresh profile per launch and no background traffic. Every console message of type error and every
 * uncaught page error is collected, so a test can assert the page stayed clean.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type BrowserContext, chromium, type Page } from 'playwright-core';

import { onPath, type OptionalTool, optionalTool } from '../../support/optionalTool';
import { repoRoot } from './harness';

function locateChromium(): string | undefined {
  const explicit = process.env.CHROMIUM_PATH;
  if (explicit !== undefined && explicit !== '') return existsSync(explicit) ? explicit : undefined;
  if (existsSync('/usr/bin/chromium')) return '/usr/bin/chromium';
  const found = onPath('chromium');
  if (found !== undefined) return found;
  // Where `npx playwright install chromium` puts its build; playwright-core itself never downloads.
  const playwright = chromium.executablePath();
  return existsSync(playwright) ? playwright : undefined;
}

export const chromiumTool: OptionalTool = {
  name: 'Chromium',
  neededBy: 'the browser tests',
  enable: 'apt-get install chromium (.ci/run does), or set CHROMIUM_PATH to a Chromium or Chrome',
  locate: locateChromium,
};

/** The browser's path, or undefined (announced) when none is on this machine; throws when CI=true. */
const chromiumPath = (): string | undefined => optionalTool(chromiumTool);
const artifactDir = join(repoRoot, 'test-artifacts', 'console');

const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  readonly context: BrowserContext;
  /** Console errors and uncaught exceptions of every page, in order. */
  readonly errors: string[];
  newPage(viewport?: { width: number; height: number }): Promise<Page>;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (executablePath === undefined)
    throw new Error('launchBrowser without a Chromium: guard the tests with describeWithTool(chromiumTool, …)');
  const profile = mkdtempSync(join(tmpdir(), 'tallyho-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: chromiumArgs,
    viewport: { width: 1280, height: 860 },
  });
  // Playwright's waits (an element, a response, a navigation) wait as long as it takes, as every wait in
  // the suite does (test/support/waits.ts): jest's timeout is the net, and close() ends what is left.
  context.setDefaultTimeout(0);
  context.setDefaultNavigationTimeout(0);
  const errors: string[] = [];
  const watch = (page: Page): void => {
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(`console: ${message.text()} (${message.location().url})`);
    });
    page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  };
  context.pages().forEach(watch);
  context.on('page', watch);
  return {
    context,
    errors,
    async newPage(viewport) {
      const page = context.pages().find((p) => p.url() === 'about:blank') ?? (await context.newPage());
      if (viewport !== undefined) await page.setViewportSize(viewport);
      return page;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Saves a screenshot under test-artifacts/console/ (and, with UPDATE_DOCS_SCREENSHOTS=1, under docs/ for the manual). */
export async function screenshot(page: Page, name: string, options: { docs?: boolean; fullPage?: boolean } = {}): Promise<string> {
  mkdirSync(artifactDir, { recursive: true });
  const file = join(artifactDir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: options.fullPage ?? true });
  if (options.docs === true && process.env.UPDATE_DOCS_SCREENSHOTS === '1') {
    const docs = join(repoRoot, 'docs');
    mkdirSync(docs, { recursive: true });
    await page.screenshot({ path: join(docs, `console-${name}.png`), fullPage: options.fullPage ?? true });
  }
  return file;
}
