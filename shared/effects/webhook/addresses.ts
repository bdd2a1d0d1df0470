/**
 * Which addresses a webhook may connect to: public unicast only. Loopback, private, link-local,
 * shared (CGNAT), multicast, documentation and reserved ranges are refused, including IPv4 inside
 * IPv6 (mapped `::ffff:a.b.c.d`, NAT64, 6to4, IPv4-compatible). This is what stops a schedule from
 * reaching the instance metadata service (169.254.169.254), Azure's wire server (168.63.129.16),
 * localhost or the virtual network.
 */
import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();

/** IPv4 ranges that are not public unicast. */
const privateIpv4: readonly (readonly [string, number])[] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  // Azure's platform address (wire server, DNS, health probes): public-looking, but the host's own
  // (https://learn.microsoft.com/azure/virtual-network/what-is-ip-address-168-63-129-16).
  ['168.63.129.16', 32],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];

for (const [network, prefix] of privateIpv4) blocked.addSubnet(network, prefix, 'ipv4');

for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  // IPv4-compatible (deprecated) and SIIT-translated (::ffff:0:a.b.c.d) forms: never a public peer.
  ['::', 96],
  ['::ffff:0:0:0', 96],
  // NAT64 local-use prefix (RFC 8215): translates into whatever network the operator chose.
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** The two hex groups of an IPv4 address, as it sits inside an IPv6 one. */
function hexGroups(ipv4: string): string {
  const [a = 0, b = 0, c = 0, d = 0] = ipv4.split('.').map(Number);
  return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

// IPv6 forms that carry an IPv4 address a packet ends up at: mapped (::ffff:a.b.c.d), NAT64
// well-known prefix (64:ff9b::a.b.c.d) and 6to4 (2002:AABB:CCDD::). Each private IPv4 range is
// blocked in each, so BlockList (Node's own parser) decides, whatever notation the URL used.
for (const [network, prefix] of privateIpv4) {
  const groups = hexGroups(network);
  blocked.addSubnet(`::ffff:${groups}`, 96 + prefix, 'ipv6');
  blocked.addSubnet(`64:ff9b::${groups}`, 96 + prefix, 'ipv6');
  blocked.addSubnet(`2002:${groups}::`, 16 + prefix, 'ipv6');
}

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !blocked.check(address, 'ipv4');
  return family === 6 && !blocked.check(address, 'ipv6');
}
