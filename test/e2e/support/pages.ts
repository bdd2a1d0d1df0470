/** Reading a list of the API completely: page after page, following each page's continuationToken. */
import type { E2eHost } from './harness';
import { requestJson, type RequestOptions } from './http';

export interface ApiPage<T> {
  readonly items: T[];
  readonly continuationToken?: string;
  readonly unreadable?: { name: string; detail: string }[];
}

/**
 * Every page of `path` (which may carry the list's own filters), `maxPageSize` at a time; fails on any
 * answer but 200, and on a token seen twice (a loop would otherwise never end).
 */
export async function readPages<T>(
  host: E2eHost,
  path: string,
  options: RequestOptions & { maxPageSize?: number } = {},
): Promise<ApiPage<T>[]> {
  const pages: ApiPage<T>[] = [];
  const tokens = new Set<string>();
  let token: string | undefined;
  do {
    const query = new URLSearchParams({
      maxPageSize: String(options.maxPageSize ?? 1000),
      ...(token === undefined ? {} : { continuationToken: token }),
    });
    const res = await requestJson<ApiPage<T>>(host, 'GET', `${path}${path.includes('?') ? '&' : '?'}${query.toString()}`, options);
    if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
    pages.push(res.body);
    token = res.body.continuationToken;
    if (token !== undefined && tokens.has(token)) throw new Error(`GET ${path} gave the token ${token} twice`);
    if (token !== undefined) tokens.add(token);
  } while (token !== undefined);
  return pages;
}

/** Every item of `path`, in the list's order. */
export async function readAll<T>(host: E2eHost, path: string, options: RequestOptions & { maxPageSize?: number } = {}): Promise<T[]> {
  return (await readPages<T>(host, path, options)).flatMap((page) => page.items);
}
