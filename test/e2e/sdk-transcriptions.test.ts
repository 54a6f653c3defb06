// Conformance with the official Node SDK (@soniox/node) for async transcription, in the soniox-sdk
// profile (docs/wire-compat.md, "Compatibility profiles" and "REST conventions").
import { readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { SonioxHttpError, SonioxNodeClient } from '@soniox/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wordErrorRate } from '../../src/engines/stt/wer.js';
import { makeSpeech, startParlance, tempDir, type Parlance } from '../harness.js';

const SENTENCE = 'the quick brown fox jumps over the lazy dog';
const MODEL = 'stt-async-v4'; // a public id client code pins, served through the alias table
const work = tempDir('parlance-sdk-stt-');
let s: Parlance;
let client: SonioxNodeClient;
let wav: Buffer;
let fixtures: { url: string; close(): Promise<void> };
const webhookResults: { ok: boolean; status: number; event?: { id: string; status: string }; text?: string | null }[] = [];

beforeAll(async () => {
  wav = readFileSync(await makeSpeech(path.join(work, 'fox.wav'), SENTENCE));
  s = await startParlance({ env: { PARLANCE_COMPAT: 'soniox-sdk', PARLANCE_ALLOW_PRIVATE_HOSTS: '127.0.0.1' } });
  client = new SonioxNodeClient({ api_key: s.apiKey, base_url: s.url, tts_api_url: s.url });
  // One loopback server: audio fixtures, and a webhook receiver that hands each delivery to the SDK helper.
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        if (req.url === '/fox.wav') return res.writeHead(200, { 'content-type': 'audio/wav' }).end(wav);
        if (req.url === '/garbage.bin') return res.writeHead(200).end(Buffer.alloc(5000, 3));
        if (req.url?.startsWith('/hook')) {
          const request = new Request(`http://receiver${req.url}`, {
            method: req.method,
            headers: req.headers as Record<string, string>,
            body: Buffer.concat(chunks),
          });
          const result = await client.webhooks.handleRequest(request, { name: 'X-Hook-Auth', value: 'hook-secret' });
          const text = result.ok && result.event?.status === 'completed' ? ((await result.fetchTranscript?.())?.text ?? null) : undefined;
          webhookResults.push({ ok: result.ok, status: result.status, event: result.event, text });
          return res.writeHead(result.status).end();
        }
        res.writeHead(404).end();
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  fixtures = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(() => r())) };
});
afterAll(async () => {
  await s?.stop();
  await fixtures?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('@soniox/node async transcription against Parlance (soniox-sdk profile)', () => {
  it('stt.create + stt.wait reaches completed through the SDK status words', async () => {
    const file = await client.files.upload(wav, { filename: 'fox.wav' });
    const created = await client.stt.create({ model: MODEL, file_id: file.id });
    expect(created.status).toBe('queued');
    const done = await client.stt.wait(created.id, { interval_ms: 200 });
    expect(done.status).toBe('completed');
    expect(done.audio_duration_ms).toBeGreaterThan(2000);
  });

  it('stt.transcribe({file, wait}) chains upload, create, poll and transcript; segments have timings', async () => {
    const t = await client.stt.transcribe({ model: MODEL, file: wav, filename: 'fox.wav', wait: true, wait_options: { interval_ms: 200 } });
    expect(t.status).toBe('completed');
    const transcript = t.transcript!;
    expect(wordErrorRate(SENTENCE, transcript.text).wer).toBeLessThanOrEqual(0.34);
    const segments = transcript.segments();
    expect(segments.length).toBeGreaterThan(0);
    expect(segments[0]!.start_ms).toBeGreaterThanOrEqual(0);
    expect(segments.at(-1)!.end_ms).toBeLessThanOrEqual(t.audio_duration_ms!);
  });

  it('audio_url with cleanup deletes the transcription afterwards', async () => {
    const t = await client.stt.transcribe({
      model: MODEL,
      audio_url: `${fixtures.url}/fox.wav`,
      wait: true,
      wait_options: { interval_ms: 200 },
      cleanup: ['transcription'],
    });
    expect(t.status).toBe('completed');
    expect(t.transcript?.text.length).toBeGreaterThan(0);
    expect(await client.stt.get(t.id)).toBeNull();
  });

  it('webhooks reach the SDK handler with the exact auth header; the value is masked; the status code is recorded', async () => {
    const created = await client.stt.create({
      model: MODEL,
      audio_url: `${fixtures.url}/fox.wav`,
      webhook_url: `${fixtures.url}/hook?job=42`,
      webhook_auth_header_name: 'X-Hook-Auth',
      webhook_auth_header_value: 'hook-secret',
    });
    expect(created.webhook_auth_header_value).not.toBe('hook-secret');
    const done = await client.stt.wait(created.id, { interval_ms: 200 });
    expect(done.status).toBe('completed');
    const deadline = Date.now() + 15_000;
    while (!webhookResults.some((r) => r.event?.id === created.id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const hook = webhookResults.find((r) => r.event?.id === created.id)!;
    expect(hook).toMatchObject({ ok: true, status: 200, event: { id: created.id, status: 'completed' } });
    expect(wordErrorRate(SENTENCE, hook.text ?? '').wer).toBeLessThanOrEqual(0.34);
    const again = await client.stt.get(created.id);
    expect(again!.webhook_status_code).toBe(200);
  });

  it('getTranscript right after create throws a 409 (not null)', async () => {
    const created = await client.stt.create({ model: MODEL, audio_url: `${fixtures.url}/fox.wav` });
    const err = await client.stt.getTranscript(created.id).then(
      () => null,
      (e: unknown) => e,
    );
    // It may already have finished on a fast machine; otherwise the SDK must see the 409.
    if (err !== null) {
      expect(err).toBeInstanceOf(SonioxHttpError);
      expect((err as SonioxHttpError).statusCode).toBe(409);
    }
    await client.stt.wait(created.id, { interval_ms: 200 });
  });

  it('undecodable audio ends in `error` with error_type and message, no transcript, webhook status error', async () => {
    // Uploads are checked at the door (400 invalid_audio_file), so garbage arrives through audio_url.
    await expect(client.files.upload(Buffer.alloc(3000, 1), { filename: 'junk.bin' })).rejects.toMatchObject({ statusCode: 400 });
    const t = await client.stt.transcribe({
      model: MODEL,
      audio_url: `${fixtures.url}/garbage.bin`,
      webhook_url: `${fixtures.url}/hook`,
      webhook_auth_header_name: 'X-Hook-Auth',
      webhook_auth_header_value: 'hook-secret',
      wait: true,
      wait_options: { interval_ms: 200 },
    });
    expect(t.status).toBe('error');
    expect(t.error_type).toBe('invalid_audio_file');
    expect(t.error_message).toEqual(expect.any(String));
    expect(t.transcript).toBeNull();
    const deadline = Date.now() + 15_000;
    while (!webhookResults.some((r) => r.event?.id === t.id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(webhookResults.find((r) => r.event?.id === t.id)).toMatchObject({ ok: true, event: { status: 'error' } });
  });

  it('list iteration, count, destroy (transcription and its file)', async () => {
    const t = await client.stt.transcribe({ model: MODEL, file: wav, filename: 'destroy-me.wav', wait: true, wait_options: { interval_ms: 200 } });
    const count = await client.stt.count();
    const seen: string[] = [];
    for await (const item of await client.stt.list({ limit: 2 })) seen.push(item.id);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toContain(t.id);
    expect(count.total).toBe(seen.length);
    const fileId = t.file_id!;
    await client.stt.destroy(t.id);
    expect(await client.stt.get(t.id)).toBeNull();
    expect(await client.files.get(fileId)).toBeNull();
    expect((await client.stt.count()).total).toBe(count.total - 1);
  });

  it('refuses an unknown model with a 400 the SDK surfaces', async () => {
    await expect(client.stt.create({ model: 'stt-async-v999', audio_url: `${fixtures.url}/fox.wav` })).rejects.toMatchObject({ statusCode: 400 });
  });
});
