// Which addresses a guarded request may reach: private, loopback, link-local, metadata and other reserved ranges
// are blocked (including IPv4 embedded in IPv6 spellings), unless the allowPrivateHosts setting lists the host,
// the address or its CIDR.
import * as net from 'node:net';
import ipaddr from 'ipaddr.js';

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** A parsed allowPrivateHosts setting. */
export interface AllowList {
  hosts: ReadonlySet<string>;
  cidrs: readonly Cidr[];
}

export function normaliseHostname(host: string): string {
  let h = host.toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.endsWith('.')) h = h.slice(0, -1);
  return h;
}

/** IPv4-mapped IPv6 (::ffff:a.b.c.d) is the IPv4 address for every purpose here. */
function unmap(addr: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() ? (addr as ipaddr.IPv6).toIPv4Address() : addr;
}

/**
 * Parses allowPrivateHosts entries: an IP (`127.0.0.1`, `::1`), a CIDR (`10.0.0.0/8`, `fd00::/8`) or a hostname
 * (`localhost`, matched exactly and case-insensitively against the URL's host). Throws TypeError on a malformed
 * CIDR, so a bad setting is loud rather than silently allowing nothing.
 */
export function parseAllowList(entries: readonly string[]): AllowList {
  const hosts = new Set<string>();
  const cidrs: Cidr[] = [];
  for (const raw of entries) {
    const entry = normaliseHostname(raw.trim());
    if (entry === '') continue;
    if (entry.includes('/')) {
      if (!ipaddr.isValidCIDR(entry)) throw new TypeError(`allowPrivateHosts: "${raw}" is not a valid CIDR`);
      const [addr, bits] = ipaddr.parseCIDR(entry);
      const un = unmap(addr);
      cidrs.push(un === addr ? [addr, bits] : [un, Math.max(0, bits - 96)]);
    } else if (net.isIP(entry) !== 0) {
      const addr = unmap(ipaddr.parse(entry));
      cidrs.push([addr, addr.kind() === 'ipv4' ? 32 : 128]);
    } else {
      hosts.add(entry);
    }
  }
  return { hosts, cidrs };
}

function allowlistedAddress(addr: ipaddr.IPv4 | ipaddr.IPv6, allow: AllowList): boolean {
  const a = unmap(addr);
  // match() throws across kinds, so only compare like with like.
  return allow.cidrs.some(([net_, bits]) => net_.kind() === a.kind() && a.match(net_, bits));
}

function v4FromParts(hi: number, lo: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
}

/**
 * Why an address is blocked, or null when it is an ordinary public unicast address. Ignores the allowlist.
 * IPv4: everything ipaddr.js does not call `unicast` (0/8, 10/8, 100.64/10, 127/8, 169.254/16, 172.16/12,
 * 192.0.0/24, documentation nets, 192.168/16, 198.18/15, multicast, 240/4, broadcast, ...).
 * IPv6: everything not `unicast` (::, ::1, fe80::/10, fc00::/7, ff00::/8, 2001:db8::/32, teredo, ...), plus the
 * deprecated IPv4-compatible ::/96; IPv4-mapped ::ffff:0:0/96 is judged by its IPv4 address; NAT64
 * 64:ff9b::/96 and 6to4 2002::/16 are judged by the IPv4 address they embed (local-use NAT64 64:ff9b:1::/48 is
 * blocked outright).
 */
export function blockedReason(address: string): string | null {
  if (net.isIP(address) === 0) return 'not an IP address';
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') {
    const range = (parsed as ipaddr.IPv4).range();
    return range === 'unicast' ? null : range;
  }
  const v6 = parsed as ipaddr.IPv6;
  const p = v6.parts;
  if (v6.isIPv4MappedAddress()) {
    const inner = blockedReason(v6.toIPv4Address().toString());
    return inner === null ? null : `ipv4Mapped(${inner})`;
  }
  const range = v6.range();
  if (range === 'rfc6052') {
    // Well-known NAT64 prefix 64:ff9b::/96 carries the IPv4 address in the last 32 bits.
    if (p[0] === 0x64 && p[1] === 0xff9b && p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0) {
      const inner = blockedReason(v4FromParts(p[6] ?? 0, p[7] ?? 0).toString());
      return inner === null ? null : `nat64(${inner})`;
    }
    return 'nat64LocalUse';
  }
  if (range === '6to4') {
    const inner = blockedReason(v4FromParts(p[1] ?? 0, p[2] ?? 0).toString());
    return inner === null ? null : `6to4(${inner})`;
  }
  if (range !== 'unicast') return range;
  // ::/96 (IPv4-compatible, deprecated) is "unicast" to ipaddr.js but is no public address.
  if (p.slice(0, 6).every((x) => x === 0)) return 'ipv4Compatible';
  return null;
}

/** True when a request to this address must be refused, taking the allowlist into account. */
export function isBlockedAddress(address: string, allow: AllowList): boolean {
  if (net.isIP(address) === 0) return true;
  if (allowlistedAddress(ipaddr.parse(address), allow)) return false;
  return blockedReason(address) !== null;
}
