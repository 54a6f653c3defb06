// Conformance with the official Node SDK (@soniox/node) for concurrency (docs/wire-compat.md, "REST conventions") —
// concurrencyLimits.get() during an open real-time session, getHistory() gap-free with the live stream in it.
import { SonioxHttpError, SonioxNodeClient } from '@soniox/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startParlance, waitFor, type Parlance } from '../harness.js';

// Node 20 has no global WebSocket; the SDK's real-time client looks for one.
(globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;

let s: Parlance;
let client: SonioxNodeClient;

beforeAll(async () => {
  s = await startParlance({ env: { PARLANCE_CONCURRENCY_SAMPLE_SECONDS: '0.5', PARLANCE_TTS_CONCURRENT_ORG: '0', PARLANCE_TTS_CONCURRENT_PROJECT: '0' } });
  client = new SonioxNodeClient({
    api_key: s.apiKey,
    base_url: s.url,
    realtime: { ws_base_url: `${s.url.replace('http', 'ws')}/transcribe-websocket` },
  });
});
afterAll(() => s?.stop());

describe('@soniox/node concurrencyLimits against Parlance', () => {
  it('get() during an open STT session shows live counts and limits (null = unlimited); getHistory() is gap-free and holds the stream', async () => {
    const idle = await client.concurrencyLimits.get();
    expect(idle).toEqual({
      project: { current: { transcribe_concurrent: 0, tts_concurrent: 0 }, limits: { transcribe_concurrent: 50, tts_concurrent: null } },
      organization: { current: { transcribe_concurrent: 0, tts_concurrent: 0 }, limits: { transcribe_concurrent: 100, tts_concurrent: null } },
    });

    const session = client.realtime.stt({ model: 'stt-rt-v4', audio_format: 'pcm_s16le', sample_rate: 16000, num_channels: 1 });
    await session.connect();
    session.sendAudio(new Uint8Array(3200));
    const keepalive = setInterval(() => session.sendAudio(new Uint8Array(3200)), 500);
    try {
      const live = await waitFor(
        () => client.concurrencyLimits.get(),
        (r) => r.project.current.transcribe_concurrent === 1,
        20_000,
      );
      expect(live.organization.current.transcribe_concurrent).toBe(1);
      expect(live.project.current.tts_concurrent).toBe(0);

      const now = Date.now();
      const minute = now - (now % 60_000);
      const window = { start_time: new Date(minute - 5 * 60_000).toISOString(), end_time: new Date(minute + 60_000).toISOString() };
      const history = await waitFor(
        () => client.concurrencyLimits.getHistory({ ...window, period_sec: 60, kind: 'stt' }),
        (h) => (h.entries.at(-1)?.sample_max ?? 0) >= 1,
        20_000,
      );
      expect(history.kind).toBe('stt');
      expect(history.entries).toHaveLength(6);
      history.entries.forEach((e, i) => {
        expect(Date.parse(e.period_start)).toBe(minute - 5 * 60_000 + i * 60_000);
        expect(e.period_sec).toBe(60);
        expect(e.sample_min).toBe(0);
      });
      const current = history.entries.at(-1)!;
      expect(current.total_count).toBe(1);
      expect(current.sample_count).toBeGreaterThanOrEqual(1);
      for (const e of history.entries.slice(0, -1)) if (e.total_count === 0) expect(e).toMatchObject({ sample_max: 0, sample_sum: 0, sample_count: 0 });

      const hourly = await client.concurrencyLimits.getHistory({
        start_time: new Date(minute - (minute % 3_600_000)).toISOString(),
        end_time: new Date(minute + 60_000).toISOString(),
        period_sec: 3600,
        kind: 'stt',
      });
      expect(hourly.entries).toHaveLength(1);
      expect(hourly.entries[0]).toMatchObject({ period_sec: 3600, total_count: 60 });
      expect(hourly.entries[0]!.sample_max).toBeGreaterThanOrEqual(1);

      const tts = await client.concurrencyLimits.getHistory({ ...window, period_sec: 60, kind: 'tts' });
      expect(tts.entries.every((e) => e.sample_max === 0 && e.total_count === 0)).toBe(true);
    } finally {
      clearInterval(keepalive);
      session.close();
    }
    await waitFor(
      () => client.concurrencyLimits.get(),
      (r) => r.project.current.transcribe_concurrent === 0,
      20_000,
    );
  });

  it('getHistory() with end_time not after start_time, or 60 s periods over 7 days, throws SonioxHttpError 400', async () => {
    for (const opts of [
      { start_time: '2026-04-28T10:00:00Z', end_time: '2026-04-28T10:00:00Z', period_sec: 60 as const, kind: 'stt' as const },
      { start_time: '2026-04-01T00:00:00Z', end_time: '2026-04-09T00:00:00Z', period_sec: 60 as const, kind: 'tts' as const },
    ]) {
      const err = await client.concurrencyLimits.getHistory(opts).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(SonioxHttpError);
      expect((err as SonioxHttpError).statusCode).toBe(400);
      expect(JSON.parse((err as SonioxHttpError).bodyText!)).toMatchObject({ error_type: 'invalid_request', status_code: 400 });
    }
  });
});
