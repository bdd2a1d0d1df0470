/**
 * The webhook allow-list (TALLYHO_SCHEDULES_WEBHOOK_ALLOWED_HOSTS): `hooks.example.com` allows that
 * host, `*.example.com` any subdomain of it (not the apex); `:8443` after either allows that port,
 * otherwise only 443 (80 for http). Only https URLs without credentials qualify — except, for local
 * development, plain http to a loopback host (`localhost`, 127.0.0.0/8, `[::1]`) when private
 * addresses are allowed (TALLYHO_SCHEDULES_WEBHOOK_ALLOW_PRIVATE_ADDRESSES): nothing leaves the
 * machine, so there is nothing for TLS to protect. An empty list allows nothing.
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

/** A loopback host as a URL names it: `localhost` or a literal loopback address (what it resolves to is checked again at the call). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname
    .toLowerCase()
    .replace(/\.$/, '')
    .replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
}

/** Why `url` may not be called, or undefined when it may (as far as the URL itself tells). */
export function urlRejection(url: URL, allowed: readonly AllowedHost[], allowPrivateAddresses = false): string | undefined {
  const localHttp = url.protocol === 'http:' && allowPrivateAddresses && isLoopbackHost(url.hostname);
  if (url.protocol !== 'https:' && !localHttp) {
    return allowPrivateAddresses ? 'Only https URLs (or http to a loopback host) may be called' : 'Only https URLs may be called';
  }
  if (url.username !== '' || url.password !== '') return 'Credentials in the URL are not allowed';
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  const port = url.port === '' ? (localHttp ? 80 : 443) : Number(url.port);
  const listed = allowed.some((a) => a.port === port && (a.wildcard ? host.endsWith(`.${a.host}`) : host === a.host));
  if (!listed) return `The host ${host}${url.port === '' ? '' : `:${url.port}`} is not on the webhook allow-list`;
  // An IP literal is allowed only when listed as such; its address is checked like a resolved one.
  if (isIP(host.replace(/^\[|\]$/g, '')) !== 0 && !allowed.some((a) => !a.wildcard && a.host === host)) {
    return 'IP addresses must be listed literally';
  }
  return undefined;
}
