/** Conditional GETs: whether the client's cached copy is still current. */

/** Whether an `If-None-Match` header matches `etag` (a list, `*`, and weak tags compare weakly, RFC 9110). */
export function ifNoneMatchHits(header: string | null, etag: string): boolean {
  if (header === null) return false;
  const trimmed = header.trim();
  if (trimmed === '*') return true;
  const opaque = (tag: string): string => tag.trim().replace(/^W\//, '');
  return trimmed.split(',').some((tag) => opaque(tag) === opaque(etag));
}
