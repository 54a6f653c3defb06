// A webhook the SSRF guard would refuse is refused when the transcription is created (400 naming webhook_url), not
// dropped at delivery. The policy is the guard's (src/lib/ssrf-fetch.ts): one resolved address that is private or
// reserved and not allowlisted is enough. Delivery checks again (DNS can change); a host that does not resolve now is
// let through, since it may by then.
import * as dns from 'node:dns';
import * as net from 'node:net';
import { blockedReason, isBlockedAddress, parseAllowList, type AllowList, type LookupFunction } from '../../lib/ssrf-fetch.js';

/** Longest wait for DNS while a transcription is created. */
const LOOKUP_TIMEOUT_MS = 2000;

const HOW_TO_ALLOW = 'webhooks are not delivered there unless PARLANCE_ALLOW_PRIVATE_HOSTS names the host or its network (e.g. for local development)';

/**
 * Why the guard would refuse webhooks to `url` with this allowPrivateHosts setting (a message for the client naming
 * the host as given, never an address it resolved to), or undefined.
 */
export async function privateWebhookTarget(
  url: URL,
  allowPrivateHosts: readonly string[],
  opts: { lookup?: LookupFunction; timeoutMs?: number } = {},
): Promise<string | undefined> {
  let allow: AllowList;
  try {
    allow = parseAllowList(allowPrivateHosts);
  } catch {
    return undefined; // a malformed setting is reported by each delivery
  }
  let host = url.hostname.toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host.endsWith('.')) host = host.slice(0, -1);
  if (host === '' || allow.hosts.has(host)) return undefined;
  if (net.isIP(host) !== 0)
    return isBlockedAddress(host, allow)
      ? `${host} is a private or reserved network address (${blockedReason(host) ?? 'reserved'}); ${HOW_TO_ALLOW}`
      : undefined;
  const addresses = await resolve(host, opts.lookup ?? (dns.lookup as LookupFunction), opts.timeoutMs ?? LOOKUP_TIMEOUT_MS);
  if (!addresses.some((a) => isBlockedAddress(a, allow))) return undefined;
  return `host ${host} resolves to a private or reserved network address; ${HOW_TO_ALLOW}`;
}

/** Every address of `host`; none when it does not resolve in time. */
function resolve(host: string, lookup: LookupFunction, timeoutMs: number): Promise<string[]> {
  return new Promise((done) => {
    const timer = setTimeout(() => done([]), timeoutMs);
    const finish = (addresses: string[]) => {
      clearTimeout(timer);
      done(addresses);
    };
    try {
      lookup(host, { all: true, family: 0 }, (err, result) => {
        if (err) return finish([]);
        finish(typeof result === 'string' ? [result] : result.map((a) => a.address));
      });
    } catch {
      finish([]);
    }
  });
}
