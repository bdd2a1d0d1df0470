/**
 * The console's API client. The admin key lives in sessionStorage (gone when the browser session
 * ends) and goes out as `x-functions-key`; with App Service authentication the sign-in cookie is
 * sent instead. Errors come back as problem+json and are thrown as `ApiError` for the views to show.
 */
const keyItem = 'tallyho.adminKey';
const modeItem = 'tallyho.authMode';

export type AuthMode = 'key' | 'signin';

export interface Credentials {
  readonly mode: AuthMode;
  readonly key: string | null;
}

export function readCredentials(): Credentials | null {
  const mode = sessionStorage.getItem(modeItem);
  if (mode === 'signin') return { mode, key: null };
  const key = sessionStorage.getItem(keyItem);
  return key === null || key === '' ? null : { mode: 'key', key };
}

export function saveKey(key: string): void {
  sessionStorage.setItem(keyItem, key);
  sessionStorage.setItem(modeItem, 'key');
}

export function chooseSignIn(): void {
  sessionStorage.removeItem(keyItem);
  sessionStorage.setItem(modeItem, 'signin');
}

export function forgetCredentials(): void {
  sessionStorage.removeItem(keyItem);
  sessionStorage.removeItem(modeItem);
}

export interface Problem {
  readonly type?: string;
  readonly title?: string;
  readonly status?: number;
  readonly detail?: string;
  readonly code?: string;
  readonly issues?: readonly { readonly path: string; readonly message: string }[];
}

export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly problem: Problem,
    readonly retryAfter: string | null,
    readonly request: string,
  ) {
    super(problem.detail ?? problem.title ?? `HTTP ${status}`);
  }
}

function apiBase(): string {
  const meta = document.querySelector<HTMLMetaElement>('meta[name="tallyho-api-base"]');
  return (meta?.content ?? '/api').replace(/\/+$/, '');
}

/** `seg` escapes one path segment (names are validated server-side; this keeps a typo from becoming a path). */
export const seg = encodeURIComponent;

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const credentials = readCredentials();
  return credentials?.key ? { ...extra, 'x-functions-key': credentials.key } : extra;
}

async function errorOf(response: Response, request: string): Promise<ApiError> {
  const text = await response.text().catch(() => '');
  let problem: Problem = { status: response.status, title: response.statusText || `HTTP ${response.status}` };
  if (/json/.test(response.headers.get('content-type') ?? '') && text !== '') {
    try {
      problem = { ...problem, ...(JSON.parse(text) as Problem) };
    } catch {
      // Not JSON after all: keep the status line.
    }
  } else if (text !== '') {
    problem = { ...problem, detail: text.slice(0, 500) };
  }
  if (response.status === 401 && problem.detail === undefined) {
    problem = { ...problem, detail: 'The host refused the request: enter the admin key (or sign in).' };
  }
  return new ApiError(response.status, problem, response.headers.get('retry-after'), request);
}

export async function api<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const request = `${method} ${path}`;
  const response = await fetch(`${apiBase()}/${path}`, {
    method,
    headers: headers(body === undefined ? {} : { 'content-type': 'application/json' }),
    credentials: 'same-origin',
    cache: 'no-store',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    ...(signal === undefined ? {} : { signal }),
  });
  if (!response.ok) throw await errorOf(response, request);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

export interface ServerEvent {
  readonly event: string;
  readonly data: string;
  readonly id?: string;
}

/**
 * Reads a server-sent event stream with fetch (EventSource cannot send the key header) until it
 * ends or `signal` aborts. Resolves when the server closes the stream.
 */
export async function readEvents(path: string, onEvent: (event: ServerEvent) => void, signal: AbortSignal): Promise<void> {
  const response = await fetch(`${apiBase()}/${path}`, {
    headers: headers({ accept: 'text/event-stream' }),
    credentials: 'same-origin',
    cache: 'no-store',
    signal,
  });
  if (!response.ok || response.body === null) throw await errorOf(response, `GET ${path}`);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    for (let end = buffer.search(/\r?\n\r?\n/); end !== -1; end = buffer.search(/\r?\n\r?\n/)) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
      const event = parseEvent(block);
      if (event !== undefined) onEvent(event);
    }
  }
}

function parseEvent(block: string): ServerEvent | undefined {
  let event = 'message';
  let id: string | undefined;
  const data: string[] = [];
  for (const line of block.split(/\r?\n/)) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id') id = value;
  }
  if (data.length === 0) return undefined;
  return { event, data: data.join('\n'), ...(id === undefined ? {} : { id }) };
}
