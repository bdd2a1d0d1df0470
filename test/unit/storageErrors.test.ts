/**
 * How storage failures become AppErrors. The errors are the SDK's own: `RestError` as the storage
 * clients throw it for a status or a failed send, and the errors the SDK's HTTP client really raises
 * for a refused connection and a timed-out request (local sockets only).
 */
import { createServer, type Server, type Socket } from 'node:net';

import { createDefaultHttpClient, createPipelineRequest, RestError } from '@azure/core-rest-pipeline';

import { AppError, toProblem } from '../../shared/errors';
import { dependencyRetryAfterSeconds, isTransientStorageError, translateStorageError } from '../../shared/storage/errors';

function withStatus(statusCode: number): RestError {
  return new RestError(`status ${statusCode}\nRequestId:abc`, { statusCode, code: 'SomeStorageCode' });
}

function expectUnavailable(err: AppError, cause: unknown): void {
  expect({ code: err.code, status: err.status, retryable: err.retryable, retryAfter: err.retryAfterSeconds }).toEqual({
    code: 'DependencyUnavailable',
    status: 503,
    retryable: true,
    retryAfter: dependencyRetryAfterSeconds,
  });
  expect(err.cause).toBe(cause);
  expect(err.internal).toMatch(/while reading thing/);
  expect(err.message).toBe('Storage is unavailable; try again shortly');
}

describe('translateStorageError by status', () => {
  it.each([
    [404, 'NotFound', 404],
    [409, 'Conflict', 409],
    [412, 'PreconditionFailed', 412],
  ] as const)('%i is %s, not retryable, cause kept', (statusCode, code, status) => {
    const cause = withStatus(statusCode);
    const err = translateStorageError(cause, 'reading thing');
    expect({ code: err.code, status: err.status, retryable: err.retryable, retryAfter: err.retryAfterSeconds }).toEqual({
      code,
      status,
      retryable: false,
      retryAfter: undefined,
    });
    expect(err.cause).toBe(cause);
    expect(err.internal).toMatch(/while reading thing/);
    expect(err.message).not.toMatch(/reading thing|status/);
  });

  it.each([408, 429, 500, 502, 503, 504])('%i is DependencyUnavailable (503, retryable, Retry-After)', (statusCode) => {
    const cause = withStatus(statusCode);
    expect(isTransientStorageError(cause)).toBe(true);
    const err = translateStorageError(cause, 'reading thing');
    expectUnavailable(err, cause);
    expect(err.internal).toContain(`(${statusCode})`);
  });

  it.each([400, 401, 403, 501, 505])('%i is not transient: Internal (500, not retryable), first line of the message only', (statusCode) => {
    const cause = withStatus(statusCode);
    expect(isTransientStorageError(cause)).toBe(false);
    const err = translateStorageError(cause, 'reading thing');
    expect({ code: err.code, status: err.status, retryable: err.retryable }).toEqual({ code: 'Internal', status: 500, retryable: false });
    expect(err.message).toBe(`Storage failed while reading thing: status ${statusCode}`);
  });

  it('an AppError passes through unchanged', () => {
    const original = new AppError('CorruptState', 'sequence x is corrupt');
    expect(translateStorageError(original, 'reading thing')).toBe(original);
  });
});

describe('translateStorageError without a status (network, timeouts, aborts)', () => {
  it.each(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'REQUEST_SEND_ERROR'])(
    'a send failure with code %s is DependencyUnavailable',
    (code) => {
      const cause = new RestError('socket trouble', { code });
      expect(isTransientStorageError(cause)).toBe(true);
      expectUnavailable(translateStorageError(cause, 'reading thing'), cause);
    },
  );

  it('an aborted or timed-out signal (DOMException AbortError / TimeoutError) is DependencyUnavailable', () => {
    const controller = new AbortController();
    controller.abort();
    const aborted: unknown = controller.signal.reason;
    const timedOut = new DOMException('The operation timed out', 'TimeoutError');
    expectUnavailable(translateStorageError(aborted, 'reading thing'), aborted);
    expectUnavailable(translateStorageError(timedOut, 'reading thing'), timedOut);
  });

  it("fetch's TypeError with a network cause is DependencyUnavailable (the cause chain is followed)", () => {
    const cause = new TypeError('fetch failed', { cause: Object.assign(new Error('connect'), { code: 'UND_ERR_CONNECT_TIMEOUT' }) });
    expectUnavailable(translateStorageError(cause, 'reading thing'), cause);
  });

  it('an unknown code or a plain error is Internal, not retried', () => {
    for (const cause of [new RestError('odd', { code: 'ESOMETHINGELSE' }), new Error('bug'), 'a string', undefined]) {
      expect(isTransientStorageError(cause)).toBe(false);
      const err = translateStorageError(cause, 'reading thing');
      expect({ code: err.code, retryable: err.retryable }).toEqual({ code: 'Internal', retryable: false });
    }
  });
});

describe("the SDK HTTP client's real failures", () => {
  const client = createDefaultHttpClient();
  let server: Server | undefined;

  afterEach(async () => {
    const s = server;
    server = undefined;
    if (s !== undefined) await new Promise<void>((resolve) => s.close(() => resolve()));
  });

  function listen(onConnection: (socket: Socket) => void): Promise<number> {
    const s = createServer(onConnection);
    server = s;
    return new Promise((resolve) =>
      s.listen(0, '127.0.0.1', () => {
        const address = s.address();
        resolve(typeof address === 'object' && address !== null ? address.port : 0);
      }),
    );
  }

  async function failure(url: string, timeout = 0): Promise<unknown> {
    return client.sendRequest(createPipelineRequest({ url, timeout, allowInsecureConnection: true })).then(
      () => new Error('the request succeeded'),
      (err: unknown) => err,
    );
  }

  it('a refused connection is DependencyUnavailable', async () => {
    // A port that was just free and is now closed again: nothing listens there.
    const port = await listen(() => undefined);
    await new Promise<void>((resolve) => server!.close(() => resolve()));
    server = undefined;
    const err = await failure(`http://127.0.0.1:${port}/devstoreaccount1/t`);
    expect((err as { code?: unknown }).code).toBe('ECONNREFUSED');
    expectUnavailable(translateStorageError(err, 'reading thing'), err);
  });

  it('a 503 problem from a refused connection names no address, port or table key', async () => {
    const port = await listen(() => undefined);
    await new Promise<void>((resolve) => server!.close(() => resolve()));
    server = undefined;
    const err = await failure(`http://127.0.0.1:${port}/devstoreaccount1/t`);
    const appError = translateStorageError(err, 'reading jobs/open|k-secretkey');
    const problem = JSON.stringify(toProblem(appError, '/api/jobs'));
    expect(JSON.parse(problem)).toMatchObject({ status: 503, code: 'DependencyUnavailable' });
    for (const internal of ['127.0.0.1', String(port), 'ECONNREFUSED', 'k-secretkey', 'open|']) expect(problem).not.toContain(internal);
    expect(appError.internal).toContain('k-secretkey');
  });

  it('a request that times out (server accepts, never answers) is DependencyUnavailable', async () => {
    const sockets: Socket[] = [];
    const port = await listen((socket) => sockets.push(socket));
    const err = await failure(`http://127.0.0.1:${port}/devstoreaccount1/t`, 100);
    for (const socket of sockets) socket.destroy();
    expect((err as { name?: unknown }).name).toBe('AbortError');
    expectUnavailable(translateStorageError(err, 'reading thing'), err);
  });

  it('a connection reset mid-request is DependencyUnavailable', async () => {
    const port = await listen((socket) => socket.resetAndDestroy());
    const err = await failure(`http://127.0.0.1:${port}/devstoreaccount1/t`);
    expect((err as { code?: unknown }).code).toBe('ECONNRESET');
    expectUnavailable(translateStorageError(err, 'reading thing'), err);
  });
});
