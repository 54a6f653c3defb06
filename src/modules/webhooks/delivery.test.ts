import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { SonioxNodeClient, type WebhookHandlerResult } from '@soniox/node';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import type { LookupFunction } from '../../lib/ssrf-fetch.js';
import { blockedMessage, deliverWebhook, webhookBackoffMs, webhookOutcome, WEBHOOK_MAX_ATTEMPTS, type WebhookDeliveryOptions } from './delivery.js';
import { generateSigningSecret } from './signing.js';

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  body: string;
}

interface Receiver {
  url: string;
  port: number;
  received: Received[];
  connections: number;
  close(): Promise<void>;
}

const open: Receiver[] = [];

/** A loopback webhook receiver; `answer` decides the response once the whole body is in. */
async function receiver(answer: (r: Received, res: http.ServerResponse) => unknown, host = '127.0.0.1'): Promise<Receiver> {
  const sockets = new Set<Socket>();
  const rec: Receiver = { url: '', port: 0, received: [], connections: 0, close: async () => {} };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      rec.received.push(r);
      void answer(r, res);
    });
  });
  server.on('connection', (s) => {
    rec.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  rec.port = (server.address() as AddressInfo).port;
  rec.url = `http://${host.includes(':') ? `[${host}]` : host}:${rec.port}/hooks/parlance?tag=1`;
  rec.close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  open.push(rec);
  return rec;
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});

const ID = '3c0d7c8e-8f7e-4b8a-9a53-5f0f2f0b6a11';

function opts(url: string, extra: Partial<WebhookDeliveryOptions> = {}): WebhookDeliveryOptions {
  return { url, body: { id: ID, status: 'completed' }, messageId: `msg_${ID}_1`, allowPrivateHosts: ['127.0.0.1', '::1'], timeoutMs: 5_000, ...extra };
}

describe('deliverWebhook', () => {
  it('POSTs the JSON body with content-type, user-agent and the auth header exactly as configured', async () => {
    const r = await receiver((_r, res) => res.writeHead(204).end());
    const result = await deliverWebhook(opts(r.url, { authHeaderName: 'X-Parlance-Auth', authHeaderValue: 'Bearer  s3cret=value; with spaces' }));
    expect(result).toEqual({ statusCode: 204, retryable: false });
    expect(r.received).toHaveLength(1);
    const got = r.received[0]!;
    expect(got.method).toBe('POST');
    expect(got.url).toBe('/hooks/parlance?tag=1');
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['user-agent']).toBe('Parlance-Webhooks/1');
    expect(got.headers['x-parlance-auth']).toBe('Bearer  s3cret=value; with spaces');
    // Name sent with the configured spelling.
    expect(got.rawHeaders).toContain('X-Parlance-Auth');
    expect(JSON.parse(got.body)).toEqual({ id: ID, status: 'completed' });
    expect(got.headers['content-length']).toBe(String(Buffer.byteLength(got.body)));
    expect(got.headers['webhook-signature']).toBeUndefined();
  });

  it('adds Standard Webhooks headers that verify with the reference package when a secret is set', async () => {
    const secret = generateSigningSecret();
    const r = await receiver((_r, res) => res.writeHead(200).end('{"received":true}'));
    const result = await deliverWebhook(opts(r.url, { signingSecret: secret, body: { id: ID, status: 'failed', note: 'ünïcode' } }));
    expect(result.statusCode).toBe(200);
    const got = r.received[0]!;
    expect(got.headers['webhook-id']).toBe(`msg_${ID}_1`);
    expect(Number(got.headers['webhook-timestamp'])).toBeCloseTo(Date.now() / 1000, -1);
    const verified = new Webhook(secret).verify(got.body, {
      'webhook-id': String(got.headers['webhook-id']),
      'webhook-timestamp': String(got.headers['webhook-timestamp']),
      'webhook-signature': String(got.headers['webhook-signature']),
    });
    expect(verified).toEqual({ id: ID, status: 'failed', note: 'ünïcode' });
  });

  it('reports 500 as retryable with its status', async () => {
    const r = await receiver((_r, res) => res.writeHead(500).end('oops'));
    expect(await deliverWebhook(opts(r.url))).toEqual({ statusCode: 500, error: 'The webhook endpoint answered HTTP 500.', retryable: true });
  });

  it('reports 401 as not retryable with statusCode 401', async () => {
    const r = await receiver((_r, res) => res.writeHead(401).end());
    expect(await deliverWebhook(opts(r.url))).toEqual({ statusCode: 401, error: 'The webhook endpoint answered HTTP 401.', retryable: false });
  });

  it('does not follow a redirect', async () => {
    const r = await receiver((_r, res) => res.writeHead(307, { location: 'http://169.254.169.254/' }).end());
    const result = await deliverWebhook(opts(r.url));
    expect(result).toMatchObject({ statusCode: 307, retryable: false });
    expect(r.received).toHaveLength(1);
  });

  it('refuses a private target without the allowlist: refused, not retryable, no status, nothing contacted', async () => {
    const r = await receiver((_r, res) => res.end());
    for (const url of [
      r.url,
      r.url.replace('127.0.0.1', 'localhost'),
      'http://169.254.169.254/latest/meta-data/',
      `http://[::ffff:127.0.0.1]:${r.port}/`,
      `http://2130706433:${r.port}/`,
    ]) {
      const result = await deliverWebhook(opts(url, { allowPrivateHosts: [] }));
      expect(result, url).toEqual({ statusCode: null, refused: true, error: blockedMessage(new URL(url).hostname), retryable: false });
      expect(result.error).toMatch(/private or reserved network address; delivery is blocked \(PARLANCE_ALLOW_PRIVATE_HOSTS/);
    }
    const lookup = ((_h: string, o: { all?: boolean }, cb: (...a: unknown[]) => void) =>
      o.all ? cb(null, [{ address: '10.0.0.7', family: 4 }]) : cb(null, '10.0.0.7', 4)) as unknown as LookupFunction;
    const resolved = await deliverWebhook(opts('http://hooks.example/', { allowPrivateHosts: [], lookup }));
    expect(resolved).toMatchObject({ statusCode: null, refused: true, retryable: false });
    // The host as given, never the address it resolved to.
    expect(resolved.error).toContain('hooks.example');
    expect(resolved.error).not.toContain('10.0.0.7');
    expect(r.connections).toBe(0);
  });

  it('names each outcome for the metrics: delivered, refused, retried (unless on the last attempt), failed', () => {
    expect(webhookOutcome({ statusCode: 204, retryable: false }, true)).toBe('delivered');
    expect(webhookOutcome({ statusCode: null, retryable: false, refused: true }, false)).toBe('refused');
    expect(webhookOutcome({ statusCode: 503, retryable: true }, false)).toBe('retried');
    expect(webhookOutcome({ statusCode: null, retryable: true }, false)).toBe('retried');
    expect(webhookOutcome({ statusCode: 503, retryable: true }, true)).toBe('failed');
    expect(webhookOutcome({ statusCode: 404, retryable: false }, false)).toBe('failed');
    expect(webhookOutcome({ statusCode: 307, retryable: false }, false)).toBe('failed');
  });

  it('reports a timeout as retryable with no status', async () => {
    const r = await receiver(() => {
      /* never answers */
    });
    // The receiver never answers: only the attempt's own bound ends it, and the result says so.
    const result = await deliverWebhook(opts(r.url, { timeoutMs: 200 }));
    expect(result).toEqual({ statusCode: null, error: 'The request timed out after 200 ms.', retryable: true });
  });

  it('ends an attempt at once when its signal aborts (the server stopping): no status, not retryable', async () => {
    const ctl = new AbortController();
    const r = await receiver(() => ctl.abort(new Error('stopping'))); // and never answers
    // Ended by the abort, not by the 30 s bound: the result is the cancellation, not a timeout.
    const result = await deliverWebhook(opts(r.url, { timeoutMs: 30_000, signal: ctl.signal }));
    expect(result).toEqual({ statusCode: null, error: 'The request was cancelled.', retryable: false });
    expect(r.received).toHaveLength(1);
  });

  it('reports a refused connection as retryable', async () => {
    const r = await receiver((_r, res) => res.end());
    const url = r.url;
    await r.close();
    expect(await deliverWebhook(opts(url))).toEqual({ statusCode: null, error: 'The connection was refused.', retryable: true });
  });

  it('keeps the status when the receiver answers but never finishes its body', async () => {
    const r = await receiver((_r, res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('partial');
    });
    expect(await deliverWebhook(opts(r.url, { timeoutMs: 200 }))).toEqual({ statusCode: 200, retryable: false });
  });

  it('reads a large answer only up to a bound', async () => {
    const r = await receiver((_r, res) => {
      res.writeHead(200);
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      let sent = 0;
      const pump = () => {
        while (sent < 200 && !res.destroyed) {
          sent++;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    expect(await deliverWebhook(opts(r.url, { timeoutMs: 5_000 }))).toEqual({ statusCode: 200, retryable: false });
  });

  it('refuses bad configuration without sending', async () => {
    const r = await receiver((_r, res) => res.end());
    expect(await deliverWebhook(opts('ftp://127.0.0.1/x'))).toMatchObject({
      statusCode: null,
      retryable: false,
      error: expect.stringMatching(/scheme "ftp:"/),
    });
    expect(await deliverWebhook(opts('not a url'))).toMatchObject({ statusCode: null, retryable: false });
    expect(await deliverWebhook(opts(r.url, { authHeaderName: 'Bad Name', authHeaderValue: 'x' }))).toMatchObject({ statusCode: null, retryable: false });
    expect(await deliverWebhook(opts(r.url, { authHeaderName: 'X-Auth', authHeaderValue: 'a\r\nInjected: 1' }))).toMatchObject({
      statusCode: null,
      retryable: false,
    });
    expect(await deliverWebhook(opts(r.url, { authHeaderName: 'Content-Length', authHeaderValue: '0' }))).toMatchObject({ statusCode: null, retryable: false });
    expect(await deliverWebhook(opts(r.url, { authHeaderName: 'X-Auth', authHeaderValue: 'tøken-Δ' }))).toMatchObject({ statusCode: null, retryable: false });
    expect(await deliverWebhook(opts(r.url, { signingSecret: 'whsec_nope' }))).toMatchObject({ statusCode: null, retryable: false });
    expect(r.connections).toBe(0);
  });

  it('delivers to an IPv6 loopback receiver when allowlisted', async (ctx) => {
    let r: Receiver;
    try {
      r = await receiver((_r, res) => res.writeHead(200).end(), '::1');
    } catch {
      ctx.skip();
      return;
    }
    expect(await deliverWebhook(opts(r.url))).toEqual({ statusCode: 200, retryable: false });
    expect((await deliverWebhook(opts(r.url, { allowPrivateHosts: ['127.0.0.1'] }))).statusCode).toBeNull();
  });
});

describe('conformance with the official SDK webhook helper (@soniox/node)', () => {
  const AUTH = { name: 'X-Soniox-Webhook-Auth', value: 'hunter2 token/+==' };

  /** A receiver that hands the raw request to client.webhooks.handleRequest and answers what it says. */
  async function sdkReceiver(): Promise<Receiver & { results: WebhookHandlerResult[] }> {
    const client = new SonioxNodeClient({ api_key: 'test-key-not-used' });
    const results: WebhookHandlerResult[] = [];
    const r = await receiver(async (got, res) => {
      const headers = new Headers();
      for (const [k, v] of Object.entries(got.headers)) if (typeof v === 'string') headers.set(k, v);
      const request = new Request(`http://127.0.0.1${got.url}`, { method: got.method, headers, body: got.body });
      const result = await client.webhooks.handleRequest(request, AUTH);
      results.push(result);
      res.writeHead(result.status, { 'content-type': 'application/json' }).end(JSON.stringify(result.ok ? { received: true } : { error: result.error }));
    });
    return Object.assign(r, { results });
  }

  it.each(['completed', 'error'] as const)('accepts {id, status: %s} with the auth header', async (status) => {
    const r = await sdkReceiver();
    const result = await deliverWebhook(
      opts(r.url, { body: { id: ID, status }, authHeaderName: AUTH.name, authHeaderValue: AUTH.value, signingSecret: generateSigningSecret() }),
    );
    expect(result).toEqual({ statusCode: 200, retryable: false });
    expect(r.results[0]).toMatchObject({ ok: true, status: 200, event: { id: ID, status } });
  });

  it('answers 401 to a wrong auth value, which we record as not retryable', async () => {
    const r = await sdkReceiver();
    const result = await deliverWebhook(opts(r.url, { authHeaderName: AUTH.name, authHeaderValue: 'wrong' }));
    expect(result).toEqual({ statusCode: 401, error: 'The webhook endpoint answered HTTP 401.', retryable: false });
    expect(r.results[0]).toMatchObject({ ok: false, status: 401 });
  });

  it("answers 400 to the spec profile's status 'failed' (wire-compat: compatibility profiles)", async () => {
    const r = await sdkReceiver();
    const result = await deliverWebhook(opts(r.url, { body: { id: ID, status: 'failed' }, authHeaderName: AUTH.name, authHeaderValue: AUTH.value }));
    expect(result).toMatchObject({ statusCode: 400, retryable: false });
    expect(r.results[0]).toMatchObject({ ok: false, status: 400 });
  });
});

describe('webhookBackoffMs', () => {
  it('grows exponentially and is capped', () => {
    const delays = Array.from({ length: WEBHOOK_MAX_ATTEMPTS + 2 }, (_, i) => webhookBackoffMs(i + 1));
    expect(delays.slice(0, 5)).toEqual([5_000, 30_000, 120_000, 600_000, 1_800_000]);
    expect(delays.slice(5).every((d) => d === 1_800_000)).toBe(true);
    expect(webhookBackoffMs(0)).toBe(5_000);
    expect(WEBHOOK_MAX_ATTEMPTS).toBe(6);
  });
});
