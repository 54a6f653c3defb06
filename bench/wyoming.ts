// Wyoming transcription as Home Assistant drives it: one `parlance serve` with default settings (Wyoming on), each
// real recording of the chosen half streamed as one utterance over Wyoming at real-time pace (`transcribe` {language},
// `audio-start`, 1024-sample `audio-chunk`s of 16 kHz mono, `audio-stop` right after its last sample), one after the
// other, as a satellite sends a voice command. Reported per model: WER of the final `transcript` against the
// references, the async WER of the same clips with the same engine (what a file upload gets), and the wait the user
// feels: from `audio-stop` to the `transcript` event. Without `--models`, the model Wyoming picks for `en` (what
// Home Assistant gets by default), the built-in real-time model as a live session (`transcribe` {name}), and the real
// streaming model when it is beside the project. `--models=default`: the default alone.
// `--set=tune` chooses settings on the tuning half; the held-out half (default) is the one reported.
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startParlance, tempDir, transcribeFile, type Parlance } from '../test/harness.js';
import { hasRealModel, importRealModel } from '../test/real-model.js';
import { halfClips, type RealClip, werOf } from '../test/real-speech.js';
import { freePort, WyomingClient } from '../test/wyoming-client.js';
import { benchServerEnv, pcm16k, round, type Row, summarize, type SuiteOptions, type SuiteResult } from './lib.js';

const NEURAL_ID = 'gigaspeech-kws-3m-v1';
const CHUNK_SAMPLES = 1024;
const BYTES_PER_MS = 32;
const FORMAT = { rate: 16_000, width: 2, channels: 1 };

interface Model {
  label: string;
  /** `transcribe` {name}; undefined: the server's choice for the language. */
  name: string | undefined;
  /** The async model id of the same engine, for the file WER. */
  async: string;
}

interface Utterance {
  text: string;
  /** audio-stop written → transcript read, ms. */
  waitMs: number;
  /** Bytes of answers (transcript-start, chunks) that came before audio-stop. */
  chunksBeforeStop: number;
}

/** One clip as a Wyoming utterance at real-time pace. */
async function utterance(port: number, name: string | undefined, pcm: Buffer): Promise<Utterance> {
  const c = await WyomingClient.open(port);
  c.write('transcribe', { language: 'en', ...(name ? { name } : {}) });
  c.write('audio-start', FORMAT);
  const start = performance.now();
  const step = CHUNK_SAMPLES * 2;
  for (let off = 0, i = 0; off < pcm.length; off += step, i++) {
    const due = start + (i * step) / BYTES_PER_MS;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    c.write('audio-chunk', FORMAT, pcm.subarray(off, off + step));
  }
  // The last chunk's audio has been "spoken" once its duration has passed.
  const end = start + pcm.length / BYTES_PER_MS;
  if (end > performance.now()) await new Promise((r) => setTimeout(r, end - performance.now()));
  const early = c.buffered;
  const stop = performance.now();
  c.write('audio-stop');
  const events = await c.readUntil('transcript', 'error');
  const waitMs = performance.now() - stop;
  c.close();
  const last = events.at(-1)!;
  if (last.type === 'error') throw new Error(`wyoming error: ${JSON.stringify(last.data)}`);
  return { text: String(last.data.text), waitMs, chunksBeforeStop: early };
}

/** Each clip uploaded and transcribed with `model`, one after the other. */
async function asyncTexts(s: Parlance, model: string, clips: RealClip[]): Promise<string[]> {
  const out: string[] = [];
  for (const clip of clips) out.push((await transcribeFile(s, clip.file, { model })).text);
  return out;
}

export async function run({ quick, args: options, cleanup, log }: SuiteOptions): Promise<SuiteResult> {
  const half = options.set === undefined ? 'held-out' : options.set;
  if (half !== 'held-out' && half !== 'tune') throw new Error(`--set=${options.set}: tune or held-out`);
  const clips = halfClips(quick ? 40 : 300, half);
  const dir = tempDir('parlance-bench-wyoming-');
  cleanup.add('remove temp dir', () => rmSync(dir, { recursive: true, force: true }));
  const dataDir = path.join(dir, 'data');
  mkdirSync(dataDir);
  const raw: Record<string, unknown> = { half, clips: clips.map((c) => c.file) };
  const rows: Row[] = [];

  const models: Model[] = [{ label: 'default for en', name: undefined, async: 'parlance-async-en-v1' }];
  // The built-in engine as a live session: what the default would give if it streamed.
  if (options.models !== 'default') models.push({ label: 'built-in, live (parlance-rt-en-v1)', name: 'parlance-rt-en-v1', async: 'parlance-async-en-v1' });
  if (hasRealModel && options.models !== 'default') {
    await importRealModel(dataDir, NEURAL_ID);
    models.push({ label: `neural (${NEURAL_ID})`, name: NEURAL_ID, async: NEURAL_ID });
  }

  log(`decoding ${clips.length} ${half} clips`);
  const pcm = await Promise.all(clips.map((clip) => pcm16k(clip.file)));
  const port = await freePort();
  const env = benchServerEnv({ PARLANCE_WYOMING_PORT: String(port), PARLANCE_STT_PRELOAD: 'true' });
  raw.server_env = env;
  const s = await startParlance({ dataDir, env });
  cleanup.add('stop server', () => s.stop());

  const results: Record<string, unknown> = {};
  for (const m of models) {
    log(`${m.label}: warm-up utterance`);
    await utterance(port, m.name, pcm[0]!);
    const said: Utterance[] = [];
    for (let i = 0; i < clips.length; i++) {
      log(`${m.label}: clip ${i + 1}/${clips.length}`);
      said.push(await utterance(port, m.name, pcm[i]!));
    }
    log(`${m.label}: async transcriptions of the same clips with ${m.async}`);
    const files = await asyncTexts(s, m.async, clips);
    const wyomingWer = werOf(clips.map((c, i) => ({ reference: c.reference, text: said[i]!.text })));
    const asyncWer = werOf(clips.map((c, i) => ({ reference: c.reference, text: files[i]! })));
    const wait = summarize(said.map((u) => u.waitMs));
    const early = said.filter((u) => u.chunksBeforeStop > 0).length;
    results[m.label] = {
      wyoming_wer: wyomingWer,
      async_wer: asyncWer,
      wait_ms: wait,
      utterances_with_words_before_stop: early,
      utterances: said.map((u, i) => ({ file: clips[i]!.file, text: u.text, wait_ms: round(u.waitMs, 0), chunks_before_stop: u.chunksBeforeStop })),
    };
    const pct = (w: { wer: number; errors: number; words: number }) => `${round(w.wer * 100, 1)} % (${w.errors}/${w.words})`;
    rows.push(
      { benchmark: `${m.label}: Wyoming transcript WER, ${clips.length} ${half} clips`, result: pct(wyomingWer), target: `async ${pct(asyncWer)}`, met: null },
      {
        benchmark: `${m.label}: audio-stop → transcript, p50 / p95 / max`,
        result: `${round(wait.p50, 0)} / ${round(wait.p95, 0)} / ${round(wait.max, 0)} ms`,
        target: '—',
        met: null,
      },
      { benchmark: `${m.label}: utterances with words before audio-stop`, result: `${early} of ${clips.length}`, target: '—', met: null },
    );
  }
  await s.stop();
  raw.results = results;
  return { rows, raw };
}
