import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { attachWebSockets } from './websocket.js';

let server: Server | undefined;
let detach: (() => Promise<void>) | undefined;

async function start(pingIntervalMs = 10_000, maxPayload = 1024): Promise<string> {
  server = createServer((_req, res) => res.writeHead(200).end('http'));
  const ws = attachWebSockets(server, { '/echo': (socket) => socket.on('message', (m, binary) => socket.send(m, { binary })) }, { maxPayload, pingIntervalMs });
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

  it('closes a connection whose message exceeds maxPayload with 1009', async () => {
    const base = await start(10_000, 1024);
    const ws = await open(`${base}/echo`);
    const code = new Promise<number>((r) => ws.once('close', (c) => r(c)));
    ws.send(Buffer.alloc(2048));
    expect(await code).toBe(1009);
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
