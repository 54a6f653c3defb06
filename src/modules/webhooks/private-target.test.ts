import { describe, expect, it } from 'vitest';
import type { LookupFunction } from '../../lib/ssrf-fetch.js';
import { privateWebhookTarget } from './private-target.js';

/** A DNS stand-in answering every name with `addresses` (or an error code, or never). */
function lookupOf(answer: string[] | 'ENOTFOUND' | 'hang'): LookupFunction {
  return ((_host: string, _o: unknown, cb: (err: NodeJS.ErrnoException | null, a?: unknown) => void) => {
    if (answer === 'hang') return;
    if (answer === 'ENOTFOUND') return cb(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
    cb(
      null,
      answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  }) as unknown as LookupFunction;
}

const check = (url: string, allow: string[] = [], answer: Parameters<typeof lookupOf>[0] = ['93.184.216.34']) =>
  privateWebhookTarget(new URL(url), allow, { lookup: lookupOf(answer), timeoutMs: 200 });

describe('privateWebhookTarget', () => {
  it('refuses literal loopback, private, link-local, metadata and IPv6 local addresses, in any spelling', async () => {
    for (const url of [
      'http://127.0.0.1:8080/h',
      'http://2130706433/h',
      'http://10.1.2.3/h',
      'https://192.168.1.10/h',
      'http://172.16.0.5/h',
      'http://169.254.169.254/latest/meta-data/',
      'http://100.64.0.1/h',
      'http://0.0.0.0/h',
      'http://[::1]/h',
      'http://[fe80::1]/h',
      'http://[fd00::5]/h',
      'http://[::ffff:127.0.0.1]/h',
    ]) {
      const why = await check(url);
      expect(why, url).toMatch(/is a private or reserved network address \(.+\); webhooks are not delivered there unless PARLANCE_ALLOW_PRIVATE_HOSTS/);
    }
  });

  it('refuses a name that resolves to such an address, naming the host but not the address', async () => {
    const why = await check('https://hooks.internal/h', [], ['10.0.0.7']);
    expect(why).toBe(
      'host hooks.internal resolves to a private or reserved network address; webhooks are not delivered there unless PARLANCE_ALLOW_PRIVATE_HOSTS names the host or its network (e.g. for local development)',
    );
    expect(why).not.toContain('10.0.0.7');
    // One such address is enough, as for the delivery guard.
    expect(await check('https://split.example/h', [], ['93.184.216.34', '192.168.0.2'])).toMatch(/resolves to a private/);
    // The system resolver: localhost is loopback.
    expect(await privateWebhookTarget(new URL('http://localhost:9/h'), [])).toMatch(/^host localhost resolves to a private/);
  });

  it('lets public addresses through, and names that do not resolve now (delivery checks again)', async () => {
    expect(await check('https://93.184.216.34/h')).toBeUndefined();
    expect(await check('https://[2606:2800:220:1::1]/h')).toBeUndefined();
    expect(await check('https://hooks.example/h', [], ['93.184.216.34', '2606:2800:220:1::1'])).toBeUndefined();
    expect(await check('https://nowhere.example/h', [], 'ENOTFOUND')).toBeUndefined();
    // A resolver that never answers: the lookup's own bound (200 ms here) ends the wait.
    expect(await check('https://slow.example/h', [], 'hang')).toBeUndefined();
  });

  it('lets through what PARLANCE_ALLOW_PRIVATE_HOSTS names: an address, a network, a host name', async () => {
    expect(await check('http://127.0.0.1:8080/h', ['127.0.0.1'])).toBeUndefined();
    expect(await check('http://10.1.2.3/h', ['10.0.0.0/8'])).toBeUndefined();
    expect(await check('http://hooks.internal/h', ['10.0.0.0/8'], ['10.0.0.7'])).toBeUndefined();
    expect(await check('http://hooks.internal./h', ['Hooks.Internal'], ['10.0.0.7'])).toBeUndefined();
    // Another private address than the one allowed is still refused.
    expect(await check('http://10.1.2.3/h', ['127.0.0.1'])).toMatch(/private or reserved/);
    expect(await check('http://hooks.internal/h', ['10.0.0.0/8'], ['10.0.0.7', '127.0.0.1'])).toMatch(/private or reserved/);
  });
});
