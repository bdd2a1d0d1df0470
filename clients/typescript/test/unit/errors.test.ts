import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { TallyhoError, isServerErrorCode, isTallyhoError } from '../../src/errors';
import { problemCodes } from '../../src/generated/openapi';
import { appErrorCodes } from '../../../../shared/errors';
import { fakeTransport } from '../support/fakeTransport';
import { json } from '../support/fakeFetch';

describe('errors', () => {
  test("the server's code union is the app's AppErrorCode list, through the OpenAPI document", () => {
    expect([...problemCodes]).toEqual([...appErrorCodes]);
  });

  test('the header comment lists exactly the server codes and the client codes', () => {
    const source = readFileSync(join(__dirname, '..', '..', 'src', 'errors.ts'), 'utf8');
    const header = source.slice(0, source.indexOf('*/'));
    const named = [...header.matchAll(/`([A-Z][A-Za-z]+)`/g)]
      .map((m) => m[1])
      .filter((c) => c !== 'TallyhoError' && c !== 'ServerErrorCode');
    const client = ['Timeout', 'Network', 'HttpError', 'BadResponse', 'Closed', 'Credential'];
    expect(named.sort()).toEqual([...problemCodes, ...client].sort());
  });

  test('isTallyhoError recognises an error of another copy of the package by name and shape', () => {
    class OtherCopy extends Error {
      override readonly name = 'TallyhoError';
      readonly code = 'NotFound';
      readonly status = 404;
    }
    const foreign = new OtherCopy('from the other copy');
    expect(foreign instanceof TallyhoError).toBe(false);
    expect(isTallyhoError(foreign)).toBe(true);
    expect(isTallyhoError(foreign, 'NotFound')).toBe(true);
    expect(isTallyhoError(foreign, 'Conflict')).toBe(false);
    expect(isTallyhoError(Object.assign(new Error('x'), { name: 'TallyhoError' }))).toBe(false);
    expect(isTallyhoError({ name: 'TallyhoError', code: 'NotFound', status: 404 })).toBe(false);
    expect(isTallyhoError(new TallyhoError('Closed', 'closed'), 'Closed')).toBe(true);
  });

  test("a problem document whose code is not the server's (a gateway's) is not taken for one", async () => {
    const { transport } = fakeTransport(() =>
      json(
        502,
        { type: 'about:blank', title: 'Bad gateway', status: 502, code: 'GatewayTimeout', detail: 'upstream' },
        { 'content-type': 'application/problem+json' },
      ),
    );
    const err = await transport.json({ method: 'GET', path: 'gates/a', retries: 0 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'HttpError', status: 502, problem: undefined });
    expect(isServerErrorCode('GatewayTimeout')).toBe(false);
    expect(isServerErrorCode('DependencyUnavailable')).toBe(true);
  });
});
