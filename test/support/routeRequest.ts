/**
 * Calls a RouteDefinition's `run` the way the Functions adapter does, with a request built from
 * plain values — handler tests exercise validation, problem+json and the handler without a host.
 */
import type { HttpResult } from '../../shared/http/responses';
import type { RequestLike, RouteDefinition } from '../../shared/http/route';

export interface TestRequest {
  readonly params?: Readonly<Record<string, string>>;
  readonly query?: Readonly<Record<string, string>>;
  readonly headers?: Readonly<Record<string, string>>;
  /** A string is sent as is (malformed JSON included); anything else as JSON. */
  readonly body?: unknown;
}

export interface TestResponse<T> {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** `jsonBody` after a JSON round trip, as a client would see it; `T` is what the test expects. */
  readonly body: T;
}

function pathOf(route: RouteDefinition, params: Readonly<Record<string, string>>): string {
  return `/api/${route.path.replace(/\{(\w+)\??(:[^}]*)?\}/g, (_m, name: string) => encodeURIComponent(params[name] ?? ''))}`;
}

export function routeRequest(route: RouteDefinition, request: TestRequest = {}): RequestLike {
  const params = request.params ?? {};
  const text = request.body === undefined ? '' : typeof request.body === 'string' ? request.body : JSON.stringify(request.body);
  const headers = new Map(Object.entries(request.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  if (text !== '' && !headers.has('content-length')) headers.set('content-length', String(Buffer.byteLength(text)));
  // What a JSON client sends; a test of another media type says so in `headers`.
  if (text !== '' && !headers.has('content-type')) headers.set('content-type', 'application/json');
  const url = new URL(`http://localhost${pathOf(route, params)}`);
  for (const [k, v] of Object.entries(request.query ?? {})) url.searchParams.set(k, v);
  return {
    method: route.method,
    url: url.toString(),
    headers: { get: (name) => headers.get(name.toLowerCase()) ?? null },
    params,
    query: url.searchParams,
    text: () => Promise.resolve(text),
  };
}

export async function callRoute<T = Record<string, unknown>>(route: RouteDefinition, request: TestRequest = {}): Promise<TestResponse<T>> {
  const result: HttpResult = await route.run(routeRequest(route, request));
  return {
    status: result.status,
    headers: { ...result.headers },
    body: (result.jsonBody === undefined ? undefined : JSON.parse(JSON.stringify(result.jsonBody))) as T,
  };
}

export function routeNamed(routes: readonly RouteDefinition[], name: string): RouteDefinition {
  const route = routes.find((r) => r.name === name);
  if (route === undefined) throw new Error(`No route named ${name}; have ${routes.map((r) => r.name).join(', ')}`);
  return route;
}
