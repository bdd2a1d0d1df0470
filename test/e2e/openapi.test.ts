/**
 * The OpenAPI document as the running host serves it: anonymous, cacheable by ETag, valid OpenAPI 3.1
 * by the same validator the unit test uses, and describing exactly the HTTP functions the host
 * registered (method + path), as `GET /admin/functions` lists them, the catch-all 404 aside — so a route registered without
 * being in the catalog, or documented without being registered, fails here.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { documentedRoutes } from '../../shared/app/routes';
import { openApiPath } from '../../shared/http/routeTemplate';
import { registeredFunctions } from './support/functions';
import { type E2eHost } from './support/harness';
import { sharedE2eHost } from './support/sharedHost';
import { requestJson } from './support/http';

/** The CLI of the validator the unit test uses (the package is ESM-only, so it runs in its own node). */
const validatorCli = join(__dirname, '..', '..', 'node_modules', '@seriousme', 'openapi-schema-validator', 'bin', 'validate-api-cli.js');

/**
 * The validator's verdict on `doc`: `{ valid: true }`, or `{ valid: false, errors }`. Asynchronous, so
 * the event loop keeps serving the HTTP client meanwhile: blocked for longer than the host's
 * keep-alive timeout, the client would reuse a socket the host had already closed.
 */
async function validateOpenApi(doc: unknown): Promise<{ valid: boolean; errors?: unknown }> {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-e2e-'));
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(doc));
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [validatorCli, file], { encoding: 'utf8' });
    return JSON.parse(stdout) as { valid: boolean };
  } catch (err) {
    // The CLI prints its verdict and exits 1 when the document is invalid.
    const stdout = (err as { stdout?: string }).stdout;
    if (stdout === undefined || stdout === '') throw err;
    return JSON.parse(stdout) as { valid: boolean; errors?: unknown };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Document {
  readonly openapi: string;
  readonly servers: { url: string }[];
  readonly paths: Record<string, Record<string, { operationId: string; security: Record<string, string[]>[] }>>;
}

describe('OpenAPI document over HTTP', () => {
  let host: E2eHost;

  beforeAll(async () => {
    host = await sharedE2eHost();
  });
  afterAll(async () => {
    await host.dispose();
  });

  test('is served without a key, as JSON, with an ETag that answers 304', async () => {
    const res = await requestJson<Document>(host, 'GET', '/api/openapi.json', { key: 'none' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body.openapi).toMatch(/^3\.1\./);
    expect(res.body.servers).toEqual([{ url: '/api' }]);
    const etag = res.headers.get('etag');
    expect(etag).toMatch(/^"/);
    const again = await requestJson(host, 'GET', '/api/openapi.json', { key: 'none', headers: { 'if-none-match': etag as string } });
    expect(again.status).toBe(304);
  });

  test('the served document is valid OpenAPI 3.1 (@seriousme/openapi-schema-validator), and the validator rejects a broken copy', async () => {
    const res = await requestJson<Document & Record<string, unknown>>(host, 'GET', '/api/openapi.json', { key: 'none' });
    expect(res.status).toBe(200);
    expect(await validateOpenApi(res.body)).toEqual({ valid: true });
    // Guards the guard: the same document without its required `info` must fail.
    const { info: _info, ...withoutInfo } = res.body;
    expect((await validateOpenApi(withoutInfo)).valid).toBe(false);
  });

  test('documents exactly the HTTP routes the host registered, with their auth levels', async () => {
    const functions = await registeredFunctions(host);
    // The catch-all (shared/http/notFound.ts) is registered for every method but is no operation: the
    // generator leaves it out on purpose, so it is left out here, by name, and only it.
    const catchAlls = new Set<string>(documentedRoutes().flatMap((r) => (r.anyMethod === true ? [r.name] : [])));
    expect([...catchAlls]).toEqual(['zzNotFound']);
    expect(functions.filter((f) => catchAlls.has(f.name)).map((f) => f.http?.route)).toEqual(['{*path}']);
    const registered = functions.flatMap((f) =>
      f.http === undefined || catchAlls.has(f.name)
        ? []
        : f.http.methods.map((m) => ({ op: `${m.toUpperCase()} ${openApiPath(f.http!.route)}`, name: f.name, auth: f.http!.authLevel })),
    );
    expect(registered.length).toBeGreaterThan(20);

    const doc = (await requestJson<Document>(host, 'GET', '/api/openapi.json', { key: 'none' })).body;
    const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => ({ op: `${method.toUpperCase()} ${path}`, name: op.operationId, security: op.security })),
    );
    expect(documented.map((d) => d.op).sort()).toEqual(registered.map((r) => r.op).sort());
    for (const r of registered) {
      const d = documented.find((x) => x.op === r.op);
      expect({ op: r.op, operationId: d?.name }).toEqual({ op: r.op, operationId: r.name });
      const schemes = (d?.security ?? []).flatMap((s) => Object.keys(s));
      const expected =
        r.auth === 'anonymous'
          ? []
          : r.auth === 'admin'
            ? ['adminKey', 'adminKeyQuery']
            : ['functionKey', 'functionKeyQuery', 'adminKey', 'adminKeyQuery'];
      expect({ op: r.op, schemes: schemes.sort() }).toEqual({ op: r.op, schemes: expected.sort() });
    }
  });

  test('the host enforces what the document says: a documented key route refuses a request without a key', async () => {
    const res = await requestJson(host, 'GET', '/api/sequences', { key: 'none' });
    expect(res.status).toBe(401);
    const withFunctionKey = await requestJson(host, 'GET', '/api/sequences', { key: 'function' });
    expect(withFunctionKey.status).toBe(401);
  });
});
