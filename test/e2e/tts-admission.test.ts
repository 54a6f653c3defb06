// Admission control of speech synthesis on one node: at most PARLANCE_TTS_MAX_ACTIVE requests and streams at once;
// one more is refused at once with 429 limit_exceeded and Retry-After (HTTP) or a limit_exceeded frame (WebSocket),
// while the admitted ones complete whole; once they are done, new work is admitted again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startParlance, type Parlance } from '../harness.js';
import { openTts, startMsg } from './tts-helpers.js';

let s: Parlance;
beforeAll(async () => {
  s = await startParlance({ env: { PARLANCE_TTS_PROCESSES: '1', PARLANCE_TTS_MAX_ACTIVE: '2' } });
});
afterAll(async () => s?.stop());

const LONG = Array.from({ length: 12 }, (_, i) => `Sentence number ${i + 1} is read aloud slowly by the speech engine.`).join(' ');

function tts(text: string): Promise<Response> {
  return s.request('/tts', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'tts-rt-v2', language: 'en', voice: 'Maya', audio_format: 'pcm_s16le', sample_rate: 16000, text }),
  });
}

describe('TTS admission on a saturated node', () => {
  it('admits PARLANCE_TTS_MAX_ACTIVE requests and refuses the rest at once with a well-formed 429', async () => {
    const order: string[] = [];
    const results = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const res = await tts(LONG);
        const body = Buffer.from(await res.arrayBuffer());
        order.push(res.status === 200 ? 'done' : 'refused');
        return { res, body };
      }),
    );
    const ok = results.filter((r) => r.res.status === 200);
    const refused = results.filter((r) => r.res.status !== 200);
    expect(ok).toHaveLength(2);
    expect(refused).toHaveLength(4);
    for (const { body } of ok) expect(body.length / 32000).toBeGreaterThan(15); // whole audio: seconds of speech
    for (const { res, body } of refused) {
      expect(res.status).toBe(429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      const err = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      expect(err.error_type).toBe('limit_exceeded');
      expect(err.error_code).toBe(429);
      expect(String(err.error_message)).toMatch(/saturated with speech synthesis/);
    }
    // Refusals do not wait for the admitted work: every 429 came before the first complete response.
    expect(order.slice(0, 4)).toEqual(['refused', 'refused', 'refused', 'refused']);
    // With the work done, the node admits again; the refusals are counted for operators.
    expect((await tts('Admitted again.')).status).toBe(200);
    const metrics = await (await s.request('/metrics', { key: null })).text();
    expect(metrics).toMatch(/^parlance_admission_refusals_total\{kind="tts"\} 4$/m);
  });

  it('a WebSocket stream started while the node is saturated ends with a limit_exceeded frame', async () => {
    // Two streams hold both slots: each is admitted (its first audio came) and kept going with a sentence every
    // second until the test is done, so the node stays saturated however slow the machine (a finished request would
    // free its slot; an idle stream would time out).
    const busy = await openTts(s.url);
    const c = await openTts(s.url);
    const ids = ['busy-1', 'busy-2'];
    const pump = setInterval(() => {
      for (const id of ids) busy.send({ stream_id: id, text: 'Still holding the slot. ' });
    }, 1000);
    try {
      for (const id of ids) busy.send(startMsg(s.apiKey, id));
      for (const id of ids) await busy.next((f) => f.stream_id === id && typeof f.audio === 'string', 30_000);
      c.send(startMsg(s.apiKey, 'late'));
      const err = await c.next((f) => f.stream_id === 'late' && typeof f.error_type === 'string');
      expect(err.error_type).toBe('limit_exceeded');
      expect(String(err.error_message)).toMatch(/saturated with speech synthesis/);
      await c.next((f) => f.stream_id === 'late' && f.terminated === true);
      // The busy streams end normally, which frees their slots.
      clearInterval(pump);
      for (const id of ids) busy.send({ stream_id: id, text_end: true });
      for (const id of ids) await busy.next((f) => f.stream_id === id && f.audio_end === true, 60_000);
    } finally {
      clearInterval(pump);
      busy.close();
      c.close();
    }
    // Streams are admitted again afterwards.
    const c2 = await openTts(s.url);
    try {
      c2.send(startMsg(s.apiKey, 'again'));
      c2.send({ stream_id: 'again', text: 'Back to normal.', text_end: true });
      await c2.next((f) => f.stream_id === 'again' && f.audio_end === true, 30_000);
    } finally {
      c2.close();
    }
  }, 150_000);
});
