import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RequestFilteringHttpAgent } from 'request-filtering-agent';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  blockedReason,
  describeNetworkError,
  DownloadBlockedError,
  DownloadFailedError,
  downloadToFile,
  isBlockedAddress,
  parseAllowList,
  type DownloadOptions,
  type LookupFunction,
} from './ssrf-fetch.js';

// --- loopback fixture servers ---------------------------------------------------------------------------------

interface Fixture {
  port: number;
  host: string;
  /** http://host:port (IPv6 hosts bracketed) */
  origin: string;
  /** request paths in arrival order */
  requests: string[];
  /** TCP connections accepted */
  connections: number;
  close(): Promise<void>;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, nth: number) => void;

const fixtures: Fixture[] = [];

async function serve(handler: Handler, host = '127.0.0.1'): Promise<Fixture> {
  const sockets = new Set<Socket>();
  const fixture: Fixture = { port: 0, host, origin: '', requests: [], connections: 0, close: async () => {} };
  const server = http.createServer((req, res) => {
    fixture.requests.push(req.url ?? '');
    handler(req, res, fixture.requests.length);
  });
  server.on('connection', (s) => {
    fixture.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  fixture.port = (server.address() as AddressInfo).port;
  fixture.origin = `http://${host.includes(':') ? `[${host}]` : host}:${fixture.port}`;
  fixture.close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  fixtures.push(fixture);
  return fixture;
}

function body(n: number, seed = 7): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed) & 0xff;
  return b;
}

/** A lookup that answers from a fixed table (node dns.lookup signature), counting calls. */
function tableLookup(table: Record<string, string[]>): LookupFunction & { calls: number } {
  const fn = ((hostname: string, options: { all?: boolean }, cb: (...args: unknown[]) => void) => {
    fn.calls++;
    const addrs = table[hostname];
    if (!addrs) {
      const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
      err.code = 'ENOTFOUND';
      process.nextTick(() => cb(err));
      return;
    }
    const list = addrs.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    if (options.all) process.nextTick(() => cb(null, list));
    else process.nextTick(() => cb(null, list[0]!.address, list[0]!.family));
  }) as unknown as LookupFunction & { calls: number };
  fn.calls = 0;
  return fn;
}

let dir: string;
let n = 0;
const dest = () => join(dir, `out-${++n}.bin`);

const base: DownloadOptions = { allowPrivateHosts: ['127.0.0.1'], maxBytes: 1_000_000, timeoutMs: 5_000, retries: 2, retryDelayMs: 5 };

async function failure(p: Promise<unknown>): Promise<DownloadBlockedError | DownloadFailedError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof DownloadBlockedError || err instanceof DownloadFailedError) return err;
    throw err;
  }
  throw new Error('expected the download to fail');
}

let ipv6 = true;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'parlance-ssrf-'));
  try {
    const f = await serve((_q, r) => r.end(), '::1');
    await f.close();
  } catch {
    ipv6 = false;
  }
});

afterEach(async () => {
  await Promise.all(fixtures.splice(0).map((f) => f.close()));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

// --- address policy ---------------------------------------------------------------------------------------------

describe('address classification', () => {
  const blocked = [
    '127.0.0.1',
    '127.255.255.254',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '100.64.0.1',
    '169.254.169.254',
    '169.254.0.1',
    '0.0.0.0',
    '0.1.2.3',
    '255.255.255.255',
    '224.0.0.1',
    '239.1.1.1',
    '192.0.2.1',
    '198.51.100.1',
    '203.0.113.1',
    '198.18.0.1',
    '192.0.0.8',
    '240.0.0.1',
    '::1',
    '::',
    'fe80::1',
    'febf::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    'fec0::1',
    '2001:db8::1',
    '2001::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:169.254.169.254',
    '::ffff:10.0.0.1',
    '::ffff:0.0.0.0',
    '64:ff9b::7f00:1',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b::10.0.0.1',
    '64:ff9b:1::808:808',
    '2002:7f00:1::1',
    '2002:c0a8:101::1',
    '2002:a9fe:a9fe::',
    '::7f00:1',
    '::10.0.0.1',
  ];
  const allowed = [
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '172.32.0.1',
    '100.128.0.1',
    '11.0.0.1',
    '169.255.0.1',
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ];
  const none = parseAllowList([]);

  it.each(blocked)('blocks %s', (addr) => {
    expect(blockedReason(addr)).not.toBeNull();
    expect(isBlockedAddress(addr, none)).toBe(true);
  });

  it.each(allowed)('lets public %s through', (addr) => {
    expect(blockedReason(addr)).toBeNull();
    expect(isBlockedAddress(addr, none)).toBe(false);
  });

  it('honours IP and CIDR allowlist entries, IPv4-mapped forms included, without mixing families', () => {
    const allow = parseAllowList(['10.0.0.0/8', '::1', 'fd00::/8', 'Example.Internal.']);
    expect(isBlockedAddress('10.9.8.7', allow)).toBe(false);
    expect(isBlockedAddress('::ffff:10.9.8.7', allow)).toBe(false);
    expect(isBlockedAddress('::1', allow)).toBe(false);
    expect(isBlockedAddress('fd00::5', allow)).toBe(false);
    expect(isBlockedAddress('192.168.0.1', allow)).toBe(true);
    expect(isBlockedAddress('fc00::5', allow)).toBe(true);
    // A public IPv6 address with IPv4 CIDRs in the list (ipaddr.js's match() would throw across kinds).
    expect(isBlockedAddress('2606:4700:4700::1111', allow)).toBe(false);
    expect(allow.hosts.has('example.internal')).toBe(true);
    expect(isBlockedAddress('127.0.0.1', parseAllowList(['::ffff:127.0.0.1']))).toBe(false);
    expect(isBlockedAddress('127.0.0.1', parseAllowList(['::ffff:127.0.0.0/104']))).toBe(false);
  });

  it('refuses a malformed CIDR in the allowlist', () => {
    expect(() => parseAllowList(['10.0.0.0/33'])).toThrow(TypeError);
    expect(() => parseAllowList(['not-an-ip/8'])).toThrow(TypeError);
  });
});

// --- downloads --------------------------------------------------------------------------------------------------

describe('downloadToFile', () => {
  it('streams the body to disk with the exact bytes', async () => {
    const data = body(300_000);
    const f = await serve((_q, res) => {
      res.writeHead(200, { 'content-type': 'audio/wav' });
      // Several chunks, chunked encoding.
      for (let i = 0; i < data.length; i += 65_536) res.write(data.subarray(i, i + 65_536));
      res.end();
    });
    const out = dest();
    const result = await downloadToFile(`${f.origin}/a.wav?x=1`, out, base);
    expect(result).toEqual({ bytes: data.length, contentType: 'audio/wav', finalUrl: `${f.origin}/a.wav?x=1` });
    expect((await readFile(out)).equals(data)).toBe(true);
    expect(f.requests).toEqual(['/a.wav?x=1']);
  });

  it('sends Basic auth from URL credentials and strips them from finalUrl', async () => {
    let auth: string | undefined;
    const f = await serve((req, res) => {
      auth = req.headers.authorization;
      res.end('ok');
    });
    const url = `http://us%40er:p%3Ass@127.0.0.1:${f.port}/x`;
    const result = await downloadToFile(url, dest(), base);
    expect(auth).toBe(`Basic ${Buffer.from('us@er:p:ss').toString('base64')}`);
    expect(result.finalUrl).toBe(`${f.origin}/x`);
  });

  it('fails on an announced Content-Length above the cap, without retrying', async () => {
    const f = await serve((_q, res) => {
      res.writeHead(200, { 'content-length': '5000' });
      res.end(body(5000));
    });
    const out = dest();
    const err = await failure(downloadToFile(`${f.origin}/big`, out, { ...base, maxBytes: 4999 }));
    expect(err).toBeInstanceOf(DownloadFailedError);
    expect(err.message).toMatch(/larger than 4999 bytes/);
    expect(err.retryable).toBe(false);
    expect(f.requests).toHaveLength(1);
    expect(existsSync(out)).toBe(false);
  });

  it('fails when a chunked body streams past the cap, removing the partial file', async () => {
    const f = await serve((_q, res) => {
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      let i = 0;
      const tick = setInterval(() => {
        if (res.destroyed || i++ >= 10) {
          clearInterval(tick);
          res.end();
          return;
        }
        res.write(body(1000));
      }, 5);
    });
    const out = dest();
    const err = await failure(downloadToFile(`${f.origin}/stream`, out, { ...base, maxBytes: 2500 }));
    expect(err.message).toBe('The file is larger than 2500 bytes.');
    expect(err.retryable).toBe(false);
    expect(f.requests).toHaveLength(1);
    expect(existsSync(out)).toBe(false);
  });

  it('accepts a body of exactly maxBytes', async () => {
    const f = await serve((_q, res) => res.end(body(2500)));
    const result = await downloadToFile(`${f.origin}/x`, dest(), { ...base, maxBytes: 2500 });
    expect(result.bytes).toBe(2500);
  });

  it('follows redirects (relative and absolute Location) and reports the final URL', async () => {
    const data = body(1234);
    const f = await serve((req, res) => {
      if (req.url === '/r1') res.writeHead(302, { location: '/dir/r2' }).end();
      else if (req.url === '/dir/r2') res.writeHead(301, { location: 'r3?q=1' }).end();
      else if (req.url === '/dir/r3?q=1') res.writeHead(307, { location: `http://127.0.0.1:${req.socket.localPort ?? 0}/final` }).end();
      else res.end(data);
    });
    const out = dest();
    const result = await downloadToFile(`${f.origin}/r1`, out, base);
    expect(result.finalUrl).toBe(`${f.origin}/final`);
    expect(f.requests).toEqual(['/r1', '/dir/r2', '/dir/r3?q=1', '/final']);
    expect((await readFile(out)).equals(data)).toBe(true);
  });

  it('re-checks every hop: a redirect from an allowlisted hostname to 127.0.0.1 is blocked', async () => {
    const f = await serve((_q, res) => res.writeHead(302, { location: `http://127.0.0.1:${f.port}/secret` }).end());
    const lookup = tableLookup({ 'fixture.test': ['127.0.0.1'] });
    const err = await failure(downloadToFile(`http://fixture.test:${f.port}/start`, dest(), { ...base, allowPrivateHosts: ['fixture.test'], lookup }));
    expect(err).toBeInstanceOf(DownloadBlockedError);
    expect(err.retryable).toBe(false);
    expect(f.requests).toEqual(['/start']);
  });

  it('blocks a redirect to the metadata address and to an IPv4-mapped loopback', async () => {
    const lookup = tableLookup({ 'fixture.test': ['127.0.0.1'] });
    for (const location of ['http://169.254.169.254/latest/meta-data/', 'http://[::ffff:127.0.0.1]/', 'http://0x7f.1/', 'http://[::1]/', '//10.0.0.1/']) {
      const f = await serve((_q, res) => res.writeHead(302, { location }).end());
      const err = await failure(downloadToFile(`http://fixture.test:${f.port}/`, dest(), { ...base, allowPrivateHosts: ['fixture.test'], lookup }));
      expect(err, location).toBeInstanceOf(DownloadBlockedError);
      expect(f.requests).toHaveLength(1);
    }
  });

  it('fails on a redirect loop / too many redirects, without retrying', async () => {
    const f = await serve((_q, res) => res.writeHead(302, { location: '/loop' }).end());
    const err = await failure(downloadToFile(`${f.origin}/loop`, dest(), { ...base, maxRedirects: 3 }));
    expect(err).toBeInstanceOf(DownloadFailedError);
    expect(err.message).toBe('Too many redirects (more than 3).');
    expect(err.retryable).toBe(false);
    expect(f.requests).toHaveLength(4);
  });

  it('does not retry a 404', async () => {
    const f = await serve((_q, res) => res.writeHead(404).end('nope'));
    const out = dest();
    const err = await failure(downloadToFile(`${f.origin}/missing`, out, base));
    expect(err).toBeInstanceOf(DownloadFailedError);
    expect(err.status).toBe(404);
    expect(err.retryable).toBe(false);
    expect(err.message).toBe('The server answered HTTP 404.');
    expect(f.requests).toHaveLength(1);
    expect(existsSync(out)).toBe(false);
  });

  it('retries 503 and succeeds on the third attempt', async () => {
    const f = await serve((_q, res, nth) => (nth <= 2 ? res.writeHead(503).end() : res.end(body(10))));
    const result = await downloadToFile(`${f.origin}/flaky`, dest(), base);
    expect(result.bytes).toBe(10);
    expect(f.requests).toHaveLength(3);
  });

  it('gives up on a persistent 500 after 1 + retries attempts', async () => {
    const f = await serve((_q, res) => res.writeHead(500).end());
    const err = await failure(downloadToFile(`${f.origin}/down`, dest(), { ...base, retries: 3 }));
    expect(err.status).toBe(500);
    expect(err.retryable).toBe(true);
    expect(f.requests).toHaveLength(4);
  });

  it('retries a connection reset mid-body and removes the partial file when it keeps failing', async () => {
    const f = await serve((_q, res) => {
      res.writeHead(200, { 'content-length': '100000' });
      res.write(body(20_000), () => setTimeout(() => res.socket?.destroy(), 20));
    });
    const out = dest();
    const err = await failure(downloadToFile(`${f.origin}/reset`, out, { ...base, retries: 1 }));
    expect(err).toBeInstanceOf(DownloadFailedError);
    expect(err.message).toBe('The connection was closed unexpectedly.');
    expect(err.retryable).toBe(true);
    expect(f.requests).toHaveLength(2);
    expect(existsSync(out)).toBe(false);
  });

  it('recovers from a reset on the first attempt', async () => {
    const data = body(50_000);
    const f = await serve((_q, res, nth) => {
      if (nth === 1) {
        res.writeHead(200, { 'content-length': String(data.length) });
        res.write(data.subarray(0, 1000), () => setTimeout(() => res.socket?.destroy(), 20));
      } else res.end(data);
    });
    const out = dest();
    const result = await downloadToFile(`${f.origin}/x`, out, base);
    expect(result.bytes).toBe(data.length);
    expect((await readFile(out)).equals(data)).toBe(true);
    expect(f.requests).toHaveLength(2);
  });

  it('retries a refused connection', async () => {
    const f = await serve((_q, res) => res.end());
    const port = f.port;
    await f.close();
    const err = await failure(downloadToFile(`http://127.0.0.1:${port}/`, dest(), { ...base, retries: 1 }));
    expect(err.message).toBe('The connection was refused.');
    expect(err.retryable).toBe(true);
  });

  it('times out a slow server (overall deadline) and an idle one', async () => {
    const f = await serve((_q, res) => {
      res.writeHead(200);
      const tick = setInterval(() => (res.destroyed ? clearInterval(tick) : res.write('x')), 20);
    });
    // The server trickles forever: only the overall deadline ends the download, and the error names it.
    const slow = await failure(downloadToFile(`${f.origin}/slow`, dest(), { ...base, retries: 0, timeoutMs: 300 }));
    expect(slow.message).toBe('The request timed out after 300 ms.');
    expect(slow.retryable).toBe(true);

    const g = await serve(() => {
      /* never answers */
    });
    const idle = await failure(downloadToFile(`${g.origin}/idle`, dest(), { ...base, retries: 1, timeoutMs: 5000, idleTimeoutMs: 150 }));
    expect(idle.message).toBe('No data was received for 150 ms.');
    expect(idle.retryable).toBe(true);
    expect(g.requests).toHaveLength(2);
  });

  it('times out a server that goes silent in the middle of the body', async () => {
    const f = await serve((_q, res) => {
      res.writeHead(200, { 'content-length': '10000' });
      res.write(body(100));
    });
    const out = dest();
    const err = await failure(downloadToFile(`${f.origin}/stall`, out, { ...base, retries: 0, idleTimeoutMs: 150 }));
    expect(err.message).toBe('No data was received for 150 ms.');
    expect(err.retryable).toBe(true);
    expect(existsSync(out)).toBe(false);
  });

  it("rethrows a local write failure as it is (a server fault, not the URL's), without retrying", async () => {
    const f = await serve((_q, res) => res.end(body(100)));
    const out = join(dir, 'no-such-dir', 'x.bin');
    const err = await downloadToFile(`${f.origin}/x`, out, base).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).not.toBeInstanceOf(DownloadFailedError);
    expect((err as NodeJS.ErrnoException).code).toBe('ENOENT');
    expect(f.requests).toHaveLength(1);
  });

  it('times out a DNS lookup that never answers', async () => {
    const lookup = (() => {
      /* never calls back */
    }) as unknown as LookupFunction;
    const err = await failure(downloadToFile('http://slow-dns.example/', dest(), { ...base, retries: 0, timeoutMs: 150, lookup }));
    expect(err.message).toBe('The request timed out after 150 ms.');
    expect(err.retryable).toBe(true);
  });

  it('stops when the caller aborts', async () => {
    const f = await serve(() => {
      /* hang */
    });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const err = await failure(downloadToFile(`${f.origin}/`, dest(), { ...base, signal: ac.signal }));
    expect(err).toBeInstanceOf(DownloadFailedError);
    expect((err as DownloadFailedError).aborted).toBe(true);
    expect(err.retryable).toBe(false);
    expect(f.requests).toHaveLength(1);
  });

  it.each(['ftp://127.0.0.1/a.wav', 'file:///etc/passwd', 'data:audio/wav;base64,AAAA', 'gopher://127.0.0.1:70/'])('refuses the scheme of %s', async (url) => {
    const err = await failure(downloadToFile(url, dest(), base));
    expect(err).toBeInstanceOf(DownloadFailedError);
    expect(err.message).toMatch(/^URL scheme "[a-z]+:" is not supported; only http and https/);
    expect(err.retryable).toBe(false);
  });

  it('refuses a string that is not a URL', async () => {
    const err = await failure(downloadToFile('not a url', dest(), base));
    expect(err.message).toBe('The URL is not valid.');
  });

  it('fails (without retrying) when the name does not resolve', async () => {
    const lookup = tableLookup({});
    const err = await failure(downloadToFile('http://nowhere.invalid/a', dest(), { ...base, lookup }));
    expect(err).toBeInstanceOf(DownloadFailedError);
    expect(err.message).toBe('Could not resolve host "nowhere.invalid".');
    expect(err.retryable).toBe(false);
    expect(lookup.calls).toBe(1);
  });
});

describe('downloadToFile blocks private targets before connecting', () => {
  const noAllow: DownloadOptions = { ...base, allowPrivateHosts: [] };

  it('blocks loopback in every spelling while a server listens there, with no connection made', async () => {
    const f = await serve((_q, res) => res.end('secret'));
    const urls = [
      `http://127.0.0.1:${f.port}/`,
      `http://localhost:${f.port}/`,
      `http://LOCALHOST.:${f.port}/`,
      `http://2130706433:${f.port}/`,
      `http://0x7f.1:${f.port}/`,
      `http://017700000001:${f.port}/`,
      `http://127.1:${f.port}/`,
      `http://[::ffff:127.0.0.1]:${f.port}/`,
      `http://[::ffff:7f00:1]:${f.port}/`,
      `http://0.0.0.0:${f.port}/`,
      `http://0:${f.port}/`,
      `http://[::]:${f.port}/`,
    ];
    for (const url of urls) {
      const out = dest();
      const err = await failure(downloadToFile(url, out, noAllow));
      expect(err, url).toBeInstanceOf(DownloadBlockedError);
      expect(err.message).toBe('The URL points to a private or reserved network address; requests to it are blocked.');
      expect(err.message).not.toMatch(/127|::1/);
      expect(existsSync(out)).toBe(false);
    }
    expect(f.connections).toBe(0);
  });

  it('blocks [::1] while an IPv6 server listens there', async (ctx) => {
    if (!ipv6) ctx.skip();
    const f = await serve((_q, res) => res.end('secret'), '::1');
    const err = await failure(downloadToFile(`${f.origin}/`, dest(), noAllow));
    expect(err).toBeInstanceOf(DownloadBlockedError);
    expect(f.connections).toBe(0);
  });

  it('blocks the metadata address, RFC1918, CGNAT and link-local IPv6 at once (nothing is contacted)', async () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/',
      'http://192.168.1.1/',
      'http://100.64.0.1/',
      'http://[fe80::1]/',
      'http://[fd00::1]/',
      'https://[64:ff9b::a9fe:a9fe]/',
    ]) {
      // Refused before any connection: connecting to any of these (no network here) would end in the 10 s timeout's
      // error instead.
      const err = await failure(downloadToFile(url, dest(), { ...noAllow, timeoutMs: 10_000 }));
      expect(err, url).toBeInstanceOf(DownloadBlockedError);
      expect(err.retryable).toBe(false);
    }
  });

  it('blocks a hostname that resolves to a private address (custom lookup), before connecting', async () => {
    const f = await serve((_q, res) => res.end('secret'));
    for (const addrs of [['127.0.0.1'], ['10.1.2.3'], ['169.254.169.254'], ['::1'], ['::ffff:127.0.0.1']]) {
      const lookup = tableLookup({ 'evil.example': addrs });
      const err = await failure(downloadToFile(`http://evil.example:${f.port}/`, dest(), { ...noAllow, lookup }));
      expect(err, addrs.join()).toBeInstanceOf(DownloadBlockedError);
      expect(lookup.calls).toBe(1);
    }
    expect(f.connections).toBe(0);
  });

  it('blocks a hostname when any of its addresses is private (public + private answer)', async () => {
    const lookup = tableLookup({ 'mixed.example': ['93.184.216.34', '127.0.0.1'] });
    const err = await failure(downloadToFile('http://mixed.example/', dest(), { ...noAllow, lookup }));
    expect(err).toBeInstanceOf(DownloadBlockedError);
  });

  it('resolves once and pins the connection (a second, different DNS answer is never used)', async () => {
    const f = await serve((_q, res) => res.end('ok'));
    let calls = 0;
    const lookup = ((_h: string, opts: { all?: boolean }, cb: (...a: unknown[]) => void) => {
      calls++;
      // First answer is the allowlisted fixture; any later answer would be the metadata address.
      const address = calls === 1 ? '127.0.0.1' : '169.254.169.254';
      if (opts.all) cb(null, [{ address, family: 4 }]);
      else cb(null, address, 4);
    }) as unknown as LookupFunction;
    const result = await downloadToFile(`http://rebind.example:${f.port}/`, dest(), { ...base, allowPrivateHosts: ['127.0.0.0/8'], lookup });
    expect(result.bytes).toBe(2);
    expect(calls).toBe(1);
  });
});

describe('downloadToFile allowlist', () => {
  it('lets a CIDR-allowlisted address through (hostname via custom lookup, and IP literal)', async () => {
    const f = await serve((_q, res) => res.end('hello'));
    const lookup = tableLookup({ 'fixture.test': ['127.0.0.1'] });
    const opts = { ...base, allowPrivateHosts: ['10.0.0.0/8', '127.0.0.0/8'], lookup };
    expect((await downloadToFile(`http://fixture.test:${f.port}/a`, dest(), opts)).bytes).toBe(5);
    expect((await downloadToFile(`http://127.0.0.1:${f.port}/b`, dest(), opts)).bytes).toBe(5);
    expect((await downloadToFile(`http://2130706433:${f.port}/c`, dest(), opts)).bytes).toBe(5);
    expect((await downloadToFile(`http://[::ffff:127.0.0.1]:${f.port}/d`, dest(), opts)).bytes).toBe(5);
    expect(f.requests).toEqual(['/a', '/b', '/c', '/d']);
  });

  it('lets an allowlisted hostname through whatever it resolves to', async () => {
    const f = await serve((_q, res) => res.end('hi'));
    const result = await downloadToFile(`http://localhost:${f.port}/x`, dest(), { ...base, allowPrivateHosts: ['LocalHost'] });
    expect(result.bytes).toBe(2);
  });

  it('does not extend a hostname entry to other names or an IP entry to other addresses', async () => {
    const f = await serve((_q, res) => res.end('hi'));
    const lookup = tableLookup({ 'other.test': ['127.0.0.1'] });
    const e1 = await failure(downloadToFile(`http://other.test:${f.port}/`, dest(), { ...base, allowPrivateHosts: ['fixture.test'], lookup }));
    expect(e1).toBeInstanceOf(DownloadBlockedError);
    const e2 = await failure(downloadToFile(`http://127.0.0.2:${f.port}/`, dest(), { ...base, allowPrivateHosts: ['127.0.0.1'] }));
    expect(e2).toBeInstanceOf(DownloadBlockedError);
    expect(f.connections).toBe(0);
  });

  it('downloads from an allowlisted IPv6 loopback server, with IPv4 CIDRs in the same list', async (ctx) => {
    if (!ipv6) ctx.skip();
    const f = await serve((_q, res) => res.end(body(777)), '::1');
    const result = await downloadToFile(`${f.origin}/v6`, dest(), { ...base, allowPrivateHosts: ['10.0.0.0/8', '::1/128'] });
    expect(result.bytes).toBe(777);
    const lookup = tableLookup({ 'v6.test': ['::1'] });
    const viaName = await downloadToFile(`http://v6.test:${f.port}/v6`, dest(), { ...base, allowPrivateHosts: ['192.168.0.0/16', '::1'], lookup });
    expect(viaName.bytes).toBe(777);
  });
});

describe('second line: request-filtering-agent', () => {
  it("maps the agent's own refusal to DownloadBlockedError (guards the message coupling)", async () => {
    const f = await serve((_q, res) => res.end('secret'));
    const agent = new RequestFilteringHttpAgent({ keepAlive: false });
    const lookup = tableLookup({ 'x.test': ['127.0.0.1'] });
    const errors: unknown[] = [];
    for (const opts of [{ host: '127.0.0.1' }, { host: 'x.test', lookup }]) {
      errors.push(
        await new Promise((resolve) => {
          const req = http.request({ ...opts, port: f.port, path: '/', agent }, () => resolve(new Error('connected')));
          req.on('error', resolve);
          req.end();
        }),
      );
    }
    agent.destroy();
    for (const e of errors) expect(describeNetworkError(e, { timedOut: false, aborted: false, timeoutMs: 1 })).toBeInstanceOf(DownloadBlockedError);
    expect(f.connections).toBe(0);
  });
});

describe('https', () => {
  let tls: { key: Buffer; cert: Buffer } | undefined;
  beforeAll(async () => {
    const k = join(dir, 'key.pem');
    const c = join(dir, 'cert.pem');
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-keyout',
          k,
          '-out',
          c,
          '-days',
          '2',
          '-subj',
          '/CN=localhost',
        ],
        { stdio: 'ignore' },
      );
      tls = { key: await readFile(k), cert: await readFile(c) };
    } catch {
      tls = undefined;
    }
  });

  it('goes through the guard for https and does not retry a certificate failure', async (ctx) => {
    if (!tls) ctx.skip();
    let hits = 0;
    const server = https.createServer(tls!, (_q, res) => {
      hits++;
      res.end('x');
    });
    let handshakes = 0;
    server.on('secureConnection', () => handshakes++);
    server.on('tlsClientError', () => handshakes++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const blocked = await failure(downloadToFile(`https://127.0.0.1:${port}/`, dest(), { ...base, allowPrivateHosts: [] }));
      expect(blocked).toBeInstanceOf(DownloadBlockedError);
      expect(handshakes).toBe(0);
      const lookup = tableLookup({ 'tls.test': ['127.0.0.1'] });
      const err = await failure(downloadToFile(`https://tls.test:${port}/`, dest(), { ...base, allowPrivateHosts: ['127.0.0.1'], lookup }));
      expect(err).toBeInstanceOf(DownloadFailedError);
      expect(err.message).toMatch(/^TLS error \(/);
      expect(err.retryable).toBe(false);
      expect(lookup.calls).toBe(1);
      expect(hits).toBe(0);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
