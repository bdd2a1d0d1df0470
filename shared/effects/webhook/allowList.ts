/**
 * The webhook allow-list (TALLYHO_SCHEDULES_WEBHOOK_ALLOWED_HOSTS): `hooks.example.com` allows that
 * host, `*.example.com` any subdomain of it (not the apex); `:8443` after either allows that port,
 * otherwise only 443. Only https URLs without credentials qualify. An empty list allows nothing.
 */
import { isIP } from 'node:net';

export interface AllowedHost {
  readonly host: string;
  readonly wildcard: boolean;
  readonly port: number;
}

export function parseAllowList(entries: readonly string[]): AllowedHost[] {
  return entries.map((entry) => {
    const lower = entry.toLowerCase();
    const colon = lower.lastIndexOf(':');
    const hostPart = colon > 0 ? lower.slice(0, colon) : lower;
    const port = colon > 0 ? Number(lower.slice(colon + 1)) : 443;
    const wildcard = hostPart.startsWith('*.');
    return { host: wildcard ? hostPart.slice(2) : hostPart, wildcard, port };
  });
}

/** Why `url` may not be called, or undefined when it may (as far as the URL itself tells). */
export function urlRejection(url: URL, allowed: readonly AllowedHost[]): string | undefined {
  if (url.protocol !== 'https:') return 'Only https URLs may be called';
  if (url.username !== '' || url.password !== '') return 'Credentials in the URL are not allowed';
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  const port = url.port === '' ? 443 : Number(url.port);
  const listed = allowed.some((a) => a.port === port && (a.wildcard ? host.endsWith(`.${a.host}`) : host === a.host));
  if (!listed) return `The host ${host}${url.port === '' ? '' : `:${url.port}`} is not on the webhook allow-list`;
  // An IP literal is allowed only when listed as such; its address is checked like a resolved one.
  if (isIP(host.replace(/^\[|\]$/g, '')) !== 0 && !allowed.some((a) => !a.wildcard && a.host === host)) {
    return 'IP addresses must be listed literally';
  }
  return undefined;
}
