/**
 * The API reference page (/api/docs) in headless Chromium: it renders the app's OpenAPI document
 * with the Swagger UI the app serves itself (no other origin is reached: the page's CSP would refuse,
 * and the browser would log it), shows every operation the document has, and the examples with them.
 * Without a Chromium the file is skipped with one line saying so (CI=true: it fails instead).
 */
import type { Page } from 'playwright-core';

import { describeWithTool } from '../support/optionalTool';
import { type Browser, chromiumTool, launchBrowser, screenshot } from './support/browser';
import { type E2eHost } from './support/harness';
import { sharedE2eHost } from './support/sharedHost';
import { requestJson } from './support/http';

interface OpenApiDocument {
  readonly paths: Record<string, Record<string, unknown>>;
}

const methods = new Set(['get', 'put', 'post', 'delete', 'patch']);

describeWithTool(chromiumTool, 'API reference page in Chromium', () => {
  let host: E2eHost;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    host = await sharedE2eHost();
    browser = await launchBrowser();
    page = await browser.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await host?.dispose();
  });

  test('serves the page with a strict CSP and hashed, long-cached assets', async () => {
    const res = await fetch(host.url('/api/docs'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await res.text();
    const script = /src="([^"]+\/docs\/assets\/apidocs-[A-Z0-9]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(host.url(script ?? ''));
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
  });

  test('shows every operation of /api/openapi.json, with no console error', async () => {
    const doc = await requestJson<OpenApiDocument>(host, 'GET', '/api/openapi.json');
    expect(doc.status).toBe(200);
    const documented = Object.entries(doc.body.paths)
      .flatMap(([path, item]) =>
        Object.keys(item)
          .filter((m) => methods.has(m))
          .map((m) => `${m.toUpperCase()} ${path}`),
      )
      .sort();
    expect(documented.length).toBeGreaterThan(20);

    await page.goto(host.url('/api/docs'));
    await page.locator('.opblock').first().waitFor();
    const shown = (
      await page.locator('.opblock').evaluateAll((blocks) =>
        blocks.map((b) => {
          const method = b.querySelector('.opblock-summary-method')?.textContent?.trim() ?? '';
          const path = b.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? '';
          return `${method} ${path}`;
        }),
      )
    ).sort();
    expect(shown).toEqual(documented);
    await screenshot(page, 'api-reference', { docs: true, fullPage: false });
    expect(browser.errors).toEqual([]);
  });

  test("an operation opens with its request example from the route's definition", async () => {
    await page.goto(host.url('/api/docs#/sequences'));
    const op = page.locator('.opblock-post', { has: page.locator('[data-path="/sequences/{name}/next"]') });
    await op.locator('.opblock-summary').first().click();
    await op.locator('.body-param__example, .highlight-code').first().waitFor();
    expect(await op.innerText()).toContain('"count"');
    expect(browser.errors).toEqual([]);
  });
});
