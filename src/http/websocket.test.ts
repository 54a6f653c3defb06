import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { notingWsProject } from './websocket-session.js';
import { attachWebSockets, handshakeApiKey, type WsHandler } from './websocket.js';

/** Admits a connection whose URL says ?let=in; refuses others with 401 and a JSON body, before the handshake. */
const guarded: WsHandler = (socket) => void socket.send('admitted');
guarded.admit = (request) => Promise.resolve(request.url?.includes('let=in') ? undefined : { status: 401, body: { error: { code: 'invalid_api_key' } } });

let server: Server | undefined;
let detach: (() => Promise<void>) | undefined;

async function start(pingIntervalMs = 10_000, maxPayload = 1024, firstMessageMs = 10_000): Promise<string> {
  server = createServer((_req, res) => res.writeHead(200).end('http'));
  const ws = attachWebSockets(
    server,
    {
      '/echo': (socket) => {
        socket.on('message', (m, binary) => socket.send(m, { binary }));
      },
      '/guarded': guarded,
      // Answers with the key it was offered, and reports oversized messages in a frame of its own.
      '/keyed': (socket, request) => {
        socket.send(JSON.stringify({ key: handshakeApiKey(request) ?? null }));
        return {
          oversized: (limit) => socket.send(JSON.stringify({ error: `over ${limit}` })),
          firstMessageTimeout: (ms) => {
            socket.send(JSON.stringify({ error: `nothing within ${ms}` }));
            socket.close(1000);
          },
        };
      },
    },
    { maxPayload, pingIntervalMs, firstMessageMs },
  );
  detach = ws.close;
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  await detach?.();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

const open = (url: string) =>
  new Promise<WebSocket>((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });

describe('attachWebSockets', () => {
  it('routes by path and refuses unknown paths before the handshake', async () => {
    const base = await start();
    const ws = await open(`${base}/echo?x=1`);
    const reply = new Promise<string>((r) => ws.once('message', (m) => r(String(m))));
    ws.send('hello');
    expect(await reply).toBe('hello');
    ws.close();
    const refused = await new Promise<number>((resolve) => {
      const bad = new WebSocket(`${base}/nope`);
      bad.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      bad.once('error', () => resolve(-1));
    });
    expect(refused).toBe(404);
  });

  it('lets a handler refuse the handshake with an HTTP status and JSON body (admit), or let it through', async () => {
    const base = await start();
    const refused = await new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
      const ws = new WebSocket(`${base}/guarded`);
      ws.once('open', () => reject(new Error('admitted')));
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
      });
    });
    expect(refused).toEqual({ status: 401, type: 'application/json', body: JSON.stringify({ error: { code: 'invalid_api_key' } }) });
    const ws = new WebSocket(`${base}/guarded?let=in`);
    expect(await new Promise<string>((r) => ws.once('message', (m) => r(String(m))))).toBe('admitted');
    ws.close();
  });

  it("selects OpenAI's `realtime` subprotocol when a browser client offers it", async () => {
    const base = await start();
    const ws = new WebSocket(`${base}/echo`, ['realtime', 'openai-insecure-api-key.prl_abc']);
    await new Promise((r) => ws.once('open', r));
    expect(ws.protocol).toBe('realtime');
    ws.close();
  });

  it('closes a connection whose message exceeds maxPayload with 1009', async () => {
    const base = await start(10_000, 1024);
    const ws = await open(`${base}/echo`);
    const code = new Promise<number>((r) => ws.once('close', (c) => r(c)));
    ws.send(Buffer.alloc(2048));
    expect(await code).toBe(1009);
  });

  it('lets a handler send its own frame about an oversized message before ws closes the socket', async () => {
    const base = await start(10_000, 1024);
    const ws = new WebSocket(`${base}/keyed`);
    const frames: string[] = [];
    ws.on('message', (m) => frames.push(String(m)));
    await new Promise((r) => ws.once('open', r));
    const code = new Promise<number>((r) => ws.once('close', (c) => r(c)));
    ws.send(Buffer.alloc(1024)); // at the limit: accepted
    ws.send(Buffer.alloc(1025));
    expect(await code).toBe(1009);
    expect(frames).toEqual([JSON.stringify({ key: null }), JSON.stringify({ error: 'over 1024' })]);
  });

  it('takes the key from the Authorization header or the soniox-api-key subprotocol, and selects that subprotocol', async () => {
    const base = await start();
    const first = (ws: WebSocket) => new Promise<string>((r) => ws.once('message', (m) => r(String(m))));
    const viaHeader = new WebSocket(`${base}/keyed`, { headers: { authorization: 'Bearer prl_abc' } });
    expect(JSON.parse(await first(viaHeader))).toEqual({ key: 'prl_abc' });
    viaHeader.close();
    const tempKey = 'temp:Zm9v/bar+baz=';
    const viaProtocol = new WebSocket(`${base}/keyed`, ['soniox-api-key', encodeURIComponent(tempKey)]);
    expect(JSON.parse(await first(viaProtocol))).toEqual({ key: tempKey });
    expect(viaProtocol.protocol).toBe('soniox-api-key');
    viaProtocol.close();
  });

  it("closes a connection that sends no message in time, after the surface's frame; a message in time keeps it", async () => {
    const base = await start(10_000, 1024, 300);
    const idle = new WebSocket(`${base}/keyed`);
    const frames: string[] = [];
    idle.on('message', (m) => frames.push(String(m)));
    const opened = Date.now();
    const code = await new Promise<number>((r) => idle.once('close', (c) => r(c)));
    expect(code).toBe(1000);
    expect(Date.now() - opened).toBeGreaterThanOrEqual(250);
    expect(frames.at(-1)).toBe(JSON.stringify({ error: 'nothing within 300' }));
    // Without a hook: closed with 1008. With a message in time: left open.
    const plain = await open(`${base}/echo`);
    expect(await new Promise<number>((r) => plain.once('close', (c) => r(c)))).toBe(1008);
    const talking = await open(`${base}/echo`);
    talking.send('hi');
    const stillOpen = await Promise.race([
      new Promise<boolean>((r) => talking.once('close', () => r(false))),
      new Promise<boolean>((r) => setTimeout(() => r(true), 600)),
    ]);
    expect(stillOpen).toBe(true);
    talking.close();
  });

  it('terminates a peer that stops answering pings', async () => {
    const base = await start(100);
    const ws = await open(`${base}/echo`);
    // Swallow pings without the automatic pong, as a vanished client would.
    (ws as unknown as { _receiver: { removeAllListeners(e: string): void } })._receiver.removeAllListeners('ping');
    ws.pong = () => undefined;
    const closed = await new Promise<number>((r) => ws.once('close', (c) => r(c)));
    expect(closed).toBe(1006);
  });
});

describe('session access lines', () => {
  it('logs one line per connection when it closes, with the project that authenticated in any of its events', async () => {
    const lines: Record<string, unknown>[] = [];
    let twoLogged!: () => void;
    const logged = new Promise<void>((r) => (twoLogged = r));
    // An authenticator noting its project, called from a message handler after an await (the scope follows it).
    const auth = notingWsProject({ authenticate: async (key: string) => ({ projectId: `project-of-${key.length}` }), other: () => 'bound' });
    expect(auth.other()).toBe('bound');
    expect(await auth.authenticate('outside any session')).toEqual({ projectId: 'project-of-19' });
    server = createServer();
    const ws = attachWebSockets(
      server,
      {
        '/auth': (socket) => {
          socket.on('message', (m) => {
            void (async () => {
              await new Promise((r) => setImmediate(r));
              await auth.authenticate(String(m));
              socket.close(1000);
            })();
          });
        },
      },
      { maxPayload: 1024, pingIntervalMs: 10_000, firstMessageMs: 10_000, log: { info: (fields, msg) => lines.push({ ...fields, msg }) === 2 && twoLogged() } },
    );
    detach = ws.close;
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const base = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const clients = await Promise.all([open(`${base}/auth?secret=1`), open(`${base}/auth`)]);
    const closed = clients.map((c) => new Promise<number>((r) => c.once('close', (code) => r(code))));
    clients[0]!.send('abc');
    clients[1]!.close(4000);
    expect(await Promise.all(closed)).toEqual([1000, 4000]);
    await logged;
    expect(lines).toHaveLength(2);
    const byCode = Object.fromEntries(lines.map((l) => [l.close_code as number, l]));
    expect(byCode[1000]).toMatchObject({ msg: 'websocket session ended', route: '/auth', project_id: 'project-of-3' });
    expect(byCode[4000]).toMatchObject({ msg: 'websocket session ended', route: '/auth' });
    expect(byCode[4000]).not.toHaveProperty('project_id');
    for (const l of lines) expect(typeof l.duration_ms).toBe('number');
    expect(lines[0]!.session_id).not.toBe(lines[1]!.session_id);
  });
});
