// STT suite (issue: Async transcription). Against real `parlance serve` processes and the same engine
// called directly:
//   1. accuracy: WER on real human recordings (pocketsphinx-testdata) and on flite speech, separately
//   2. throughput: RTF (processing time / audio time) with 1 and 2 STT workers
//   3. server overhead vs the engine called directly on the same audio (target ≤ 10 %)
//   4. head of line: a 3 s file submitted behind 10-minute files completes within seconds
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { decodeToPcm } from '../src/audio/decode.js';
import { PocketsphinxEngine } from '../src/engines/stt/pocketsphinx/engine.js';
import { POCKETSPHINX_EN_MODEL } from '../src/engines/stt/pocketsphinx/descriptor.js';
import { TESTDATA, testdataClips, werOf } from '../test/real-speech.js';
import { makeSpeech, startParlance, tempDir, type Parlance } from '../test/harness.js';
import { HARVARD_SENTENCES, benchServerEnv, round, type Row, summarize, type SuiteOptions, type SuiteResult } from './lib.js';

const execFileP = promisify(execFile);
const MODEL = 'parlance-async-en-v1';
const OVERHEAD_TARGET = 0.1;
const HOL_TARGET_MS = 10_000;

interface Clip {
  file: string;
  reference: string;
  set: string;
}

const SENTENCES = HARVARD_SENTENCES;
const VOICES = ['slt', 'kal16', 'awb', 'rms'];

async function durationMs(file: string): Promise<number> {
  const { stdout } = await execFileP('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file]);
  return Math.round(Number(stdout.trim()) * 1000);
}

export async function upload(s: Parlance, file: string): Promise<string> {
  const form = new FormData();
  form.set('file', new Blob([readFileSync(file)]), path.basename(file));
  const res = await s.request('/v1/files', { method: 'POST', body: form });
  if (res.status !== 201) throw new Error(`upload ${file}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

/** Create a transcription and poll every 20 ms until it ends; returns the wall time and transcript. */
export async function transcribe(s: Parlance, fileId: string): Promise<{ ms: number; text: string; audioMs: number }> {
  const t0 = performance.now();
  const res = await s.request('/v1/transcriptions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, file_id: fileId }),
  });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
  const { id } = (await res.json()) as { id: string };
  for (;;) {
    const r = (await (await s.request(`/v1/transcriptions/${id}`)).json()) as { status: string; audio_duration_ms: number; error_message: string | null };
    if (r.status === 'completed') {
      const ms = performance.now() - t0;
      const t = (await (await s.request(`/v1/transcriptions/${id}/transcript`)).json()) as { text: string };
      return { ms, text: t.text, audioMs: r.audio_duration_ms };
    }
    if (r.status === 'failed') throw new Error(`transcription ${id} failed: ${r.error_message}`);
    await new Promise((r2) => setTimeout(r2, 20));
  }
}

export async function run(opts: SuiteOptions): Promise<SuiteResult> {
  const rows: Row[] = [];
  const raw: Record<string, unknown> = {};
  const work = tempDir('parlance-bench-stt-');
  opts.cleanup.add('remove bench temp dir', () => rm(work, { recursive: true, force: true }));

  const real = testdataClips();
  if (!real.length) throw new Error(`no reference recordings under ${TESTDATA}: install pocketsphinx-testdata (make setup)`);
  opts.log(`synthesizing ${SENTENCES.length * VOICES.length} flite clips`);
  const synthetic: Clip[] = [];
  for (const [i, sentence] of SENTENCES.entries())
    for (const voice of opts.quick ? VOICES.slice(0, 1) : VOICES)
      synthetic.push({ file: await makeSpeech(path.join(work, `syn-${i}-${voice}.wav`), sentence, { voice }), reference: sentence, set: `flite-${voice}` });

  const startServer = async (workers: number) => {
    const s = await startParlance({ env: benchServerEnv({ PARLANCE_STT_WORKERS: String(workers), PARLANCE_TRANSCRIPTION_CONCURRENCY: '16' }) });
    opts.cleanup.add(`stop server (${workers} workers)`, () => s.stop());
    return s;
  };

  // 1 + 3: accuracy through the server, one job at a time, and the same clips through the engine directly.
  const s1 = await startServer(1);
  await transcribe(s1, await upload(s1, real[0]!.file)); // warm-up: loads the model
  const viaServer: { clip: Clip; text: string; ms: number; audioMs: number }[] = [];
  for (const clip of [...real, ...synthetic]) {
    const id = await upload(s1, clip.file);
    const r = await transcribe(s1, id);
    viaServer.push({ clip, ...r });
  }
  const engine = new PocketsphinxEngine({ poolSize: 1 });
  opts.cleanup.add('close direct engine', () => engine.close());
  const recognizer = await engine.load(POCKETSPHINX_EN_MODEL.engineModel);
  await recognizer.transcribe(decodeToPcm(real[0]!.file)); // warm-up
  const direct: { clip: Clip; ms: number; text: string }[] = [];
  for (const clip of [...real, ...synthetic]) {
    const t0 = performance.now();
    const words = await recognizer.transcribe(decodeToPcm(clip.file));
    direct.push({ clip, ms: performance.now() - t0, text: words.map((w) => w.text).join(' ') });
  }

  const sets = [...new Set([...real, ...synthetic].map((c) => c.set))];
  const werRows: Record<string, unknown> = {};
  const realWer = werOf(viaServer.filter((v) => !v.clip.set.startsWith('flite')).map((v) => ({ reference: v.clip.reference, text: v.text })));
  const synWer = werOf(viaServer.filter((v) => v.clip.set.startsWith('flite')).map((v) => ({ reference: v.clip.reference, text: v.text })));
  rows.push({
    benchmark: `WER, real human speech (${real.length} pocketsphinx-testdata recordings, ${realWer.words} words)`,
    result: `${round(realWer.wer * 100, 1)} %`,
    target: '— (report)',
    met: null,
  });
  for (const set of sets) {
    const w = werOf(viaServer.filter((v) => v.clip.set === set).map((v) => ({ reference: v.clip.reference, text: v.text })));
    werRows[set] = w;
    rows.push({ benchmark: `  WER ${set}`, result: `${round(w.wer * 100, 1)} % (${w.words} words)`, target: '—', met: null });
  }
  rows.push({
    benchmark: `WER, synthetic flite speech (${synthetic.length} clips, ${synWer.words} words)`,
    result: `${round(synWer.wer * 100, 1)} %`,
    target: '— (reported apart)',
    met: null,
  });
  const directWer = werOf(direct.map((d) => ({ reference: d.clip.reference, text: d.text })));
  const serverWer = werOf(viaServer.map((v) => ({ reference: v.clip.reference, text: v.text })));
  raw.wer = { real: realWer, synthetic: synWer, per_set: werRows, direct_all: directWer, server_all: serverWer };

  const serverMs = viaServer.reduce((a, v) => a + v.ms, 0);
  const directMs = direct.reduce((a, d) => a + d.ms, 0);
  const audioMs = viaServer.reduce((a, v) => a + v.audioMs, 0);
  const overhead = serverMs / directMs - 1;
  raw.overhead = {
    server_ms: serverMs,
    direct_ms: directMs,
    audio_ms: audioMs,
    clips: viaServer.length,
    per_clip_server: summarize(viaServer.map((v) => v.ms)),
    per_clip_direct: summarize(direct.map((d) => d.ms)),
  };
  rows.push({
    benchmark: `server overhead vs direct engine (${viaServer.length} short clips, create → completed, 20 ms polling)`,
    result: `${round(overhead * 100, 1)} % (server ${round(serverMs / 1000, 1)} s, direct ${round(directMs / 1000, 1)} s; WER ${round(serverWer.wer * 100, 1)} vs ${round(directWer.wer * 100, 1)} %)`,
    target: '≤ 10 %',
    met: overhead <= OVERHEAD_TARGET,
  });
  rows.push({
    benchmark: 'RTF, direct engine, one clip at a time',
    result: `${round(directMs / audioMs, 3)}`,
    target: '— (< 1 is faster than real time)',
    met: null,
  });
  await s1.stop();

  // 2: throughput with 1 and 2 workers: eight ~30 s jobs submitted at once.
  const longClip = path.join(work, 'thirty.wav');
  const concatList = path.join(work, 'concat.txt');
  writeFileSync(
    concatList,
    real
      .filter((c) => c.set === 'librivox')
      .map((c) => `file '${c.file}'`)
      .join('\n'),
  );
  await execFileP('ffmpeg', ['-nostdin', '-v', 'error', '-f', 'concat', '-safe', '0', '-i', concatList, '-ar', '16000', '-ac', '1', '-y', longClip]);
  const longMs = await durationMs(longClip);
  const jobs = opts.quick ? 2 : 8;
  const rtf: Record<string, unknown> = {};
  for (const workers of [1, 2]) {
    const s = await startServer(workers);
    await transcribe(s, await upload(s, real[0]!.file)); // warm-up
    const ids = await Promise.all(Array.from({ length: jobs }, () => upload(s, longClip)));
    const t0 = performance.now();
    await Promise.all(ids.map((id) => transcribe(s, id)));
    const wall = performance.now() - t0;
    rtf[workers] = { wall_ms: wall, audio_ms: longMs * jobs, rtf: wall / (longMs * jobs) };
    rows.push({
      benchmark: `RTF through the server, ${jobs} × ${round(longMs / 1000, 1)} s jobs at once, ${workers} worker${workers > 1 ? 's' : ''}`,
      result: `${round(wall / (longMs * jobs), 3)} (${round(wall / 1000, 1)} s)`,
      target: '—',
      met: null,
    });
    await s.stop();
  }
  raw.rtf = rtf;

  // 4: head of line: two 10-minute files saturate both workers, then a 3 s file arrives.
  const tenMin = path.join(work, 'ten-minutes.wav');
  const loops = Math.ceil((opts.quick ? 120_000 : 600_000) / longMs);
  await execFileP('ffmpeg', ['-nostdin', '-v', 'error', '-stream_loop', String(loops - 1), '-i', longClip, '-ar', '16000', '-ac', '1', '-y', tenMin]);
  const shortClip = await makeSpeech(path.join(work, 'three.wav'), 'please transcribe this short file quickly');
  const s2 = await startServer(2);
  await transcribe(s2, await upload(s2, real[0]!.file)); // warm-up
  const [longA, longB, short] = await Promise.all([upload(s2, tenMin), upload(s2, tenMin), upload(s2, shortClip)]);
  const longRuns = [transcribe(s2, longA), transcribe(s2, longB)];
  await new Promise((r) => setTimeout(r, 1000));
  const shortRun = await transcribe(s2, short);
  const longDone = await Promise.all(longRuns);
  raw.head_of_line = { long_audio_ms: longDone[0]!.audioMs, long_ms: longDone.map((l) => l.ms), short_ms: shortRun.ms, short_audio_ms: shortRun.audioMs };
  rows.push({
    benchmark: `head of line: ${round(shortRun.audioMs / 1000, 1)} s file behind two ${round(longDone[0]!.audioMs / 60000, 1)}-min files (2 workers)`,
    result: `short done in ${round(shortRun.ms / 1000, 2)} s; long ones in ${round(Math.max(...longDone.map((l) => l.ms)) / 1000, 1)} s`,
    target: `short ≤ ${HOL_TARGET_MS / 1000} s`,
    met: shortRun.ms <= HOL_TARGET_MS,
  });
  await s2.stop();
  return { rows, raw };
}
