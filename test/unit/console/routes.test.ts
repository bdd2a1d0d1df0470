/**
 * The console's server side without a host: the HTML shell builds its links from its route, never
 * from the request path (and escapes them), assets come only from the build's manifest with the right types and
 * caching, and a package built without the assets says so instead of serving a broken page.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { loadConsoleAssets } from '../../../shared/console/assets';
import { contentSecurityPolicy } from '../../../shared/console/headers';
import { consolePage } from '../../../shared/console/page';
import { consoleRoutes } from '../../../shared/console/routes';
import type { HttpResult } from '../../../shared/http/responses';
import { routePrefix } from '../../../shared/http/routeTemplate';
import { routeRequest } from '../../support/routeRequest';

function assetDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'console-assets-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const built = assetDir({
  'manifest.json': JSON.stringify({ script: 'console-AB12.js', style: 'console-CD34.css' }),
  'console-AB12.js': 'export {};',
  'console-CD34.css': 'body{}',
  'notes.txt': 'not an asset type',
});
const [page, asset] = consoleRoutes({ assets: () => loadConsoleAssets(built) });

async function run(route: typeof page, request: Parameters<typeof routeRequest>[1] = {}): Promise<HttpResult> {
  return route!.run(routeRequest(route!, request));
}

describe('console routes', () => {
  test('the page links its hashed assets and the API under its route, with the security headers', async () => {
    const res = await run(page);
    expect(res.status).toBe(200);
    expect(res.headers).toMatchObject({
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-cache',
      'content-security-policy': contentSecurityPolicy,
      'x-frame-options': 'DENY',
    });
    expect(typeof res.body).toBe('string');
    const html = res.body as string;
    expect(html).toContain('<script type="module" src="/api/console/assets/console-AB12.js"></script>');
    expect(html).toContain('<link rel="stylesheet" href="/api/console/assets/console-CD34.css">');
    expect(html).toContain('<meta name="tallyho-api-base" content="/api">');
  });

  test('the links come from the route, not the request path: a page requested as //evil.example/api/console links only this origin', async () => {
    const request = { ...routeRequest(page!), url: 'http://localhost//evil.example/api/console' };
    const html = (await page!.run(request)).body as string;
    expect(html).toContain('src="/api/console/assets/console-AB12.js"');
    expect(html).toContain('<meta name="tallyho-api-base" content="/api">');
    expect(html).not.toContain('evil.example');
  });

  test('the route prefix the links use is the one host.json serves routes under', () => {
    const hostJson = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'host.json'), 'utf8')) as {
      extensions?: { http?: { routePrefix?: string } };
    };
    expect(hostJson.extensions?.http?.routePrefix).toBe(routePrefix);
  });

  test('links are escaped', () => {
    const html = consolePage({ script: '/x"><script>alert(1)</script>', style: '/s.css', apiBase: '/api' });
    expect(html).not.toContain('<script>alert(1)');
    expect(html).toContain('&quot;&gt;&lt;script&gt;');
  });

  test('assets: hashed files with their type and a year of caching; anything else 404 or 400', async () => {
    const js = await run(asset, { params: { file: 'console-AB12.js' } });
    expect(js.status).toBe(200);
    expect(js.headers).toMatchObject({
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': 'public, max-age=31536000, immutable',
    });
    expect(Buffer.from(js.body as Uint8Array).toString()).toBe('export {};');
    expect((await run(asset, { params: { file: 'console-CD34.css' } })).headers?.['content-type']).toBe('text/css; charset=utf-8');
    for (const file of ['notes.txt', 'manifest.json', 'console-ZZ.js']) expect((await run(asset, { params: { file } })).status).toBe(404);
    for (const file of ['..', '.hidden', 'a/b.js']) expect((await run(asset, { params: { file } })).status).toBe(400);
  });

  test('a package without the built assets answers a 500 problem, and the log says to build', async () => {
    const [emptyPage] = consoleRoutes({ assets: () => loadConsoleAssets(assetDir({})) });
    const lines: string[] = [];
    const res = await emptyPage!.run(routeRequest(emptyPage!), {
      logger: { log: (_level, event, fields) => lines.push(JSON.stringify({ event, ...fields })) },
    });
    expect(res.status).toBe(500);
    // A 500's detail is generic (shared/errors.ts); what to do is in the log.
    expect(res.jsonBody).toMatchObject({
      code: 'ConfigurationInvalid',
      detail: 'A setting of the app is missing or malformed. The log names it.',
    });
    expect(lines.join('\n')).toContain('npm run build');
  });
});
