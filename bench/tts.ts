// TTS suite: time to first audio byte over HTTP (POST /tts), over the WebSocket and in a Wyoming streamed reply
// (one sentence, default model; target p95 ≤ 150 ms), real-time factor per engine and voice, and simultaneous WebSocket streams
// sustained (5 per connection across several connections), and intelligibility per voice (WER of the default
// async STT model on the voice's speech of Harvard sentences), all against a real `parlance serve`.
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { WebSocket } from 'ws';
import { startParlance, type Parlance } from '../test/harness.js';
import { benchServerEnv, HARVARD_SENTENCES, round, type Row, summarize, type SuiteOptions, type SuiteResult } from './lib.js';
import { werOf } from '../test/real-speech.js';
import { transcribe, upload } from './stt.js';
import { wyomingFirstAudio } from './tts-wyoming.js';
import { freePort, WyomingClient } from '../test/wyoming-client.js';

const TTFB_TARGET_MS = 150;
const SENTENCE = 'The quick brown fox jumps over the lazy dog.';
const PARAGRAPH =
  'Speech synthesis turns written text into audio. This paragraph is long enough to measure how fast each engine works. ' +
  'It has several sentences, some short, and some a little longer than the others. The end.';

async function httpTtfb(s: Parlance, body: Record<string, unknown>): Promise<{ ttfb: number; total: number; bytes: number }> {
  const t0 = performance.now();
  const res = await fetch(`${s.url}/tts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`POST /tts: ${res.status} ${await res.text()}`);
  const reader = res.body!.getReader();
  let ttfb = -1;
  let bytes = 0;
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    if (ttfb < 0) ttfb = performance.now() - t0;
    bytes += r.value.length;
  }
  return { ttfb, total: performance.now() - t0, bytes };
}

async function openWs(s: Parlance): Promise<WebSocket> {
  const ws = new WebSocket(`${s.url.replace('http', 'ws')}/tts-websocket`);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return ws;
}

/** One stream on `ws`: time to the first audio frame, total time, PCM bytes. */
function wsStream(s: Parlance, ws: WebSocket, id: string, text: string, voice = 'Adrian'): Promise<{ ttfb: number; total: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let ttfb = -1;
    let bytes = 0;
    const onMessage = (data: Buffer) => {
      const f = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
      if (f.stream_id !== id) return;
      if (f.error_type) {
        ws.off('message', onMessage);
        reject(new Error(`${String(f.error_type)}: ${String(f.error_message)}`));
      }
      if (typeof f.audio === 'string') {
        if (ttfb < 0) ttfb = performance.now() - t0;
        bytes += Buffer.from(f.audio, 'base64').length;
      }
      if (f.terminated) {
        ws.off('message', onMessage);
        resolve({ ttfb, total: performance.now() - t0, bytes });
      }
    };
    ws.on('message', onMessage);
    ws.send(JSON.stringify({ api_key: s.apiKey, model: 'tts-rt-v2', language: 'en', voice, audio_format: 'pcm_s16le', sample_rate: 24000, stream_id: id }));
    ws.send(JSON.stringify({ text, text_end: true, stream_id: id }));
  });
}

export async function run(opts: SuiteOptions): Promise<SuiteResult> {
  const q = opts.quick;
  const cfg = { ttfbRuns: q ? 15 : 60, warmup: 5, rtfRuns: q ? 1 : 3, connections: q ? 2 : 4, streamsPerConnection: 5, rounds: q ? 1 : 3 };
  const rows: Row[] = [];
  const raw: Record<string, unknown> = { config: cfg };
  const wyomingPort = await freePort();
  const s = await startParlance({ env: benchServerEnv({ PARLANCE_WYOMING_PORT: String(wyomingPort) }) });
  opts.cleanup.add(`stop server ${s.url}`, () => s.stop());

  // 1. HTTP time to first byte, one sentence, default model and voice.
  const body = { model: 'tts-rt-v2', language: 'en', voice: 'Adrian', audio_format: 'pcm_s16le', text: SENTENCE };
  for (let i = 0; i < cfg.warmup; i++) await httpTtfb(s, body);
  for (const fmt of ['pcm_s16le', 'wav', 'mp3'] as const) {
    const samples: number[] = [];
    opts.log(`HTTP TTFB (${fmt}): ${cfg.ttfbRuns} sequential requests`);
    for (let i = 0; i < cfg.ttfbRuns; i++) samples.push((await httpTtfb(s, { ...body, audio_format: fmt })).ttfb);
    const st = summarize(samples);
    raw[`http_ttfb_${fmt}_ms`] = st;
    rows.push({
      benchmark: `POST /tts first audio byte, 1 sentence, ${fmt} (p50 / p95)`,
      result: `${round(st.p50, 1)} / ${round(st.p95, 1)} ms`,
      target: fmt === 'pcm_s16le' ? `p95 ≤ ${TTFB_TARGET_MS} ms` : '(info)',
      met: fmt === 'pcm_s16le' ? st.p95 <= TTFB_TARGET_MS : null,
    });
  }

  // 2. WebSocket time to first audio frame.
  {
    const ws = await openWs(s);
    for (let i = 0; i < cfg.warmup; i++) await wsStream(s, ws, `w${i}`, SENTENCE);
    const samples: number[] = [];
    opts.log(`WS TTFB: ${cfg.ttfbRuns} sequential streams on one connection`);
    for (let i = 0; i < cfg.ttfbRuns; i++) samples.push((await wsStream(s, ws, `t${i}`, SENTENCE)).ttfb);
    ws.close();
    const st = summarize(samples);
    raw.ws_ttfb_ms = st;
    rows.push({
      benchmark: '/tts-websocket first audio frame, 1 sentence (p50 / p95)',
      result: `${round(st.p50, 1)} / ${round(st.p95, 1)} ms`,
      target: `p95 ≤ ${TTFB_TARGET_MS} ms`,
      met: st.p95 <= TTFB_TARGET_MS,
    });
  }

  // 2b. Wyoming streaming synthesis: first audio once the first sentence's text is complete (the same sentence).
  {
    const c = await WyomingClient.open(wyomingPort);
    const first: [string, string] = ['The quick brown fox ', 'jumps over the lazy dog. '];
    const rest = 'A second sentence follows it, and then the reply ends.';
    for (let i = 0; i < cfg.warmup; i++) await wyomingFirstAudio(c, 'Adrian', first, rest);
    const samples: number[] = [];
    opts.log(`Wyoming streaming synthesis first audio: ${cfg.ttfbRuns} sequential replies on one connection`);
    for (let i = 0; i < cfg.ttfbRuns; i++) samples.push(await wyomingFirstAudio(c, 'Adrian', first, rest));
    c.close();
    const st = summarize(samples);
    raw.wyoming_stream_first_audio_ms = st;
    rows.push({
      benchmark: 'Wyoming synthesize-chunk completing the 1st sentence → its first audio-chunk (p50 / p95)',
      result: `${round(st.p50, 1)} / ${round(st.p95, 1)} ms`,
      target: `p95 ≤ ${TTFB_TARGET_MS} ms (the HTTP first-byte budget)`,
      met: st.p95 <= TTFB_TARGET_MS,
    });
  }

  // 3. Real-time factor per engine and voice (wall time / audio seconds; lower is faster).
  const engines: [string, string[]][] = [
    ['parlance-tts-espeak-v1', ['Adrian', 'Maya', 'Oliver', 'Fiona', 'Noah', 'Clara', 'Rowan', 'Grace', 'Ethan', 'Isla']],
    ['parlance-tts-flite-v1', ['Sarah', 'Alan', 'Kevin', 'Kenneth', 'Richard', 'Archie']],
    ['parlance-tts-festival-v1', ['Kal']],
  ];
  const rtf: Record<string, number> = {};
  for (const [model, voices] of engines) {
    for (const voice of voices) {
      let wall = 0;
      let audio = 0;
      for (let i = 0; i < cfg.rtfRuns; i++) {
        const r = await httpTtfb(s, { model, language: 'en', voice, audio_format: 'pcm_s16le', sample_rate: 24000, text: PARAGRAPH });
        wall += r.total / 1000;
        audio += r.bytes / 2 / 24000;
      }
      rtf[`${model}/${voice}`] = wall / audio;
      rows.push({
        benchmark: `RTF ${model} / ${voice} (HTTP, pcm_s16le 24 kHz)`,
        result: `${round(wall / audio, 3)} (${round(audio / cfg.rtfRuns, 1)} s audio)`,
        target: '< 1 (faster than real time)',
        met: wall / audio < 1,
      });
    }
  }
  raw.rtf = rtf;

  // 4. Simultaneous WebSocket streams: connections × 5 streams, each speaking the paragraph.
  {
    const total = cfg.connections * cfg.streamsPerConnection;
    opts.log(`concurrency: ${cfg.connections} connections × ${cfg.streamsPerConnection} streams, ${cfg.rounds} round(s)`);
    const sockets = await Promise.all(Array.from({ length: cfg.connections }, () => openWs(s)));
    const ttfbs: number[] = [];
    let audio = 0;
    let failures = 0;
    const t0 = performance.now();
    for (let round_ = 0; round_ < cfg.rounds; round_++) {
      const runs = sockets.flatMap((ws, c) =>
        Array.from({ length: cfg.streamsPerConnection }, (_, k) =>
          wsStream(s, ws, `c${c}-${k}-${round_}`, PARAGRAPH, ['Adrian', 'Maya', 'Oliver', 'Fiona', 'Noah'][k]).then(
            (r) => {
              ttfbs.push(r.ttfb);
              audio += r.bytes / 2 / 24000;
            },
            () => void failures++,
          ),
        ),
      );
      await Promise.all(runs);
    }
    const wall = (performance.now() - t0) / 1000;
    for (const ws of sockets) ws.close();
    const st = summarize(ttfbs);
    raw.concurrency = { streams: total, rounds: cfg.rounds, wall_s: wall, audio_s: audio, failures, ttfb_ms: st };
    rows.push({
      benchmark: `${total} simultaneous WS streams (${cfg.connections} conn × 5): audio seconds per wall second`,
      result: `${round(audio / wall, 1)}× real time, ${failures} failed`,
      target: `≥ ${total}× (every stream real time)`,
      met: failures === 0 && audio / wall >= total,
    });
    rows.push({
      benchmark: `${total} simultaneous WS streams: first audio frame (p50 / p95)`,
      result: `${round(st.p50, 1)} / ${round(st.p95, 1)} ms`,
      target: '(info)',
      met: null,
    });
  }

  // 5. Intelligibility per voice: each voice speaks Harvard sentences (16 kHz WAV over POST /tts), our async STT
  //    model transcribes the file, and the word error rate against the text says how understandable the voice is
  //    to a machine listener (a proxy for human intelligibility, and for how well our STT copes with the voice).
  {
    const sentences = HARVARD_SENTENCES.slice(0, opts.quick ? 3 : HARVARD_SENTENCES.length);
    const text = sentences.map((x) => `${x.charAt(0).toUpperCase()}${x.slice(1)}.`).join(' ');
    const intelligibility: Record<string, number> = {};
    for (const [model, voices] of engines) {
      for (const voice of voices) {
        opts.log(`intelligibility: ${model} / ${voice}`);
        const res = await s.request('/tts', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model, language: 'en', voice, audio_format: 'wav', sample_rate: 16000, text }),
        });
        if (res.status !== 200) throw new Error(`POST /tts ${model}/${voice}: ${res.status} ${await res.text()}`);
        const file = path.join(tmpdir(), `parlance-bench-tts-${process.pid}-${voice}.wav`);
        writeFileSync(file, Buffer.from(await res.arrayBuffer()));
        opts.cleanup.add(`remove ${file}`, () => rmSync(file, { force: true }));
        const heard = await transcribe(s, await upload(s, file));
        const { wer, words } = werOf([{ reference: sentences.join(' '), text: heard.text }]);
        intelligibility[`${model}/${voice}`] = wer;
        rows.push({
          benchmark: `intelligibility ${model} / ${voice}: WER of parlance-async-en-v1 (${words} words)`,
          result: `${round(wer * 100, 1)} %`,
          target: '(info)',
          met: null,
        });
      }
    }
    raw.intelligibility_wer = intelligibility;
  }
  return { rows, raw };
}
