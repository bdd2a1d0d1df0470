import { isPublicAddress } from '../../../shared/effects/webhook/addresses';
import { parseAllowList, urlRejection } from '../../../shared/effects/webhook/allowList';

describe('webhook address rules (SSRF)', () => {
  it.each([
    '127.0.0.1',
    '127.8.9.10',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254', // instance metadata
    '168.63.129.16', // Azure's wire server
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fd00::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:a9fe:a9fe',
    '64:ff9b::10.0.0.1',
    'not-an-ip',
  ])('refuses %s', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '168.63.129.17', '2606:4700:4700::1111', '::ffff:8.8.8.8'])(
    'allows public %s',
    (address) => {
      expect(isPublicAddress(address)).toBe(true);
    },
  );
});

describe('IPv6 forms that embed a private IPv4 address count as private', () => {
  it.each([
    '::7f00:1', // IPv4-compatible 127.0.0.1
    '::127.0.0.1',
    '::ffff:0:7f00:1', // SIIT
    '::ffff:7f00:1', // mapped, hex notation
    '::ffff:a9fe:a9fe', // mapped 169.254.169.254
    '64:ff9b::a00:1', // NAT64 10.0.0.1
    '64:ff9b:1::7f00:1', // NAT64 local-use
    '2002:7f00:1::', // 6to4 127.0.0.1
    '2002:a9fe:a9fe::1', // 6to4 169.254.169.254
    '2002:c0a8:101::', // 6to4 192.168.1.1
    '::ffff:a83f:8110', // mapped 168.63.129.16 (Azure's wire server)
    '::ffff:168.63.129.16',
    '64:ff9b::a83f:8110', // NAT64 168.63.129.16
    '2002:a83f:8110::', // 6to4 168.63.129.16
    '::a83f:8110', // IPv4-compatible 168.63.129.16
  ])('refuses %s', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['::ffff:808:808', '64:ff9b::808:808', '2002:808:808::1'])('allows %s (embeds the public 8.8.8.8)', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });
});

describe('webhook allow-list', () => {
  const allowed = parseAllowList(['hooks.example.com', '*.partner.example', 'alt.example.com:8443', '203.0.113.7']);
  const reason = (url: string): string | undefined => urlRejection(new URL(url), allowed);

  it('allows listed hosts on 443, wildcard subdomains, and listed ports', () => {
    expect(reason('https://hooks.example.com/x')).toBeUndefined();
    expect(reason('https://HOOKS.example.com./x')).toBeUndefined();
    expect(reason('https://a.b.partner.example/x')).toBeUndefined();
    expect(reason('https://alt.example.com:8443/x')).toBeUndefined();
  });

  it('refuses http, other hosts, the wildcard apex, unlisted ports, credentials and unlisted IP literals', () => {
    expect(reason('http://hooks.example.com/x')).toMatch(/https/);
    expect(reason('https://evil.example.com/x')).toMatch(/not on the webhook allow-list/);
    expect(reason('https://hooks.example.com.evil.net/x')).toMatch(/allow-list/);
    expect(reason('https://partner.example/x')).toMatch(/allow-list/);
    expect(reason('https://hooks.example.com:8443/x')).toMatch(/allow-list/);
    expect(reason('https://user:pw@hooks.example.com/x')).toMatch(/Credentials/);
    expect(reason('https://127.0.0.1/x')).toMatch(/allow-list/);
    expect(reason('https://203.0.113.7/x')).toBeUndefined();
  });

  it('allows nothing when the list is empty', () => {
    expect(urlRejection(new URL('https://hooks.example.com/'), [])).toMatch(/allow-list/);
  });
});

describe('http to loopback (local development)', () => {
  const allowed = parseAllowList(['localhost:8080', '127.0.0.1:8080', '[::1]:8080', 'hooks.example.com:8080']);
  it.each(['http://localhost:8080/hook', 'http://127.0.0.1:8080/hook', 'http://[::1]:8080/hook'])(
    'allows %s only when private addresses are allowed',
    (url) => {
      expect(urlRejection(new URL(url), allowed, true)).toBeUndefined();
      expect(urlRejection(new URL(url), allowed, false)).toBe('Only https URLs may be called');
    },
  );
  it('refuses http to any other host, and an unlisted loopback port', () => {
    expect(urlRejection(new URL('http://hooks.example.com:8080/hook'), allowed, true)).toMatch(
      /Only https URLs \(or http to a loopback host\)/,
    );
    expect(urlRejection(new URL('http://localhost/hook'), allowed, true)).toMatch(/not on the webhook allow-list/);
  });
});
