// Two-pass real-time finals with an offline model you bring as the second pass, end to end over
// /transcribe-websocket. The test models hear loudness: the streaming one says "yes" at the end of each tone burst
// (test/fixtures/sherpa-models.ts), the offline transducer claiming the second pass says "是" at its start, or "否" when a
// session's context names it as a term (hotwords; test/fixtures/sherpa-hotword-model.ts), so the words of each final
// token tell which model made them. The first pass may be a streaming model you bring or the built-in pocketsphinx.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOTWORD_MODEL, writeHotwordTransducerModel } from '../fixtures/sherpa-hotword-model.js';
import { toneBursts, writeEnergyStreamingModel } from '../fixtures/sherpa-models.js';
import { logLines, makeSpeech, type Parlance, type RealtimeFrame, startParlance, streamRealtime, tempDir } from '../harness.js';

const root = tempDir('parlance-second-pass-');
const dataDir = path.join(root, 'data');

function modelFolder(name: string, manifest: Record<string, unknown>, write: (dir: string) => void): void {
  const dir = path.join(dataDir, 'models', name);
  mkdirSync(dir, { recursive: true });
  write(dir);
  writeFileSync(path.join(dir, 'parlance-model.json'), JSON.stringify({ languages: ['en'], ...manifest }));
}

let s: Parlance;

beforeAll(async () => {
  modelFolder(
    'live',
    {
      id: 'energy-live-v1',
      family: 'stt-streaming',
      type: 'transducer',
      files: { encoder: 'encoder.onnx', decoder: 'decoder.onnx', joiner: 'joiner.onnx', tokens: 'tokens.txt' },
      aliases: ['stt-rt-v4'],
    },
    (d) => writeEnergyStreamingModel(d),
  );
  const files = { encoder: 'encoder.onnx', decoder: 'decoder.onnx', joiner: 'joiner.onnx', tokens: 'tokens.txt' };
  modelFolder('hotword', { id: 'energy-hotword-v1', family: 'stt-offline', type: 'transducer', files, modeling_unit: 'cjkchar', second_pass: true }, (d) =>
    writeHotwordTransducerModel(d),
  );
  s = await startParlance({ dataDir, keepDataDir: true, env: { PARLANCE_LOG_LEVEL: 'info' } });
}, 60_000);

afterAll(async () => {
  await s?.stop();
  rmSync(root, { recursive: true, force: true });
});

const { plain: PLAIN, hotword: HOTWORD } = HOTWORD_MODEL;
const finalWords = (frames: RealtimeFrame[]) => frames.flatMap((f) => f.tokens).filter((t) => t.is_final && !t.text.startsWith('<'));
const partialWords = (frames: RealtimeFrame[]) => frames.flatMap((f) => f.tokens).filter((t) => !t.is_final && !t.text.startsWith('<'));
const sessionLogs = () => logLines(s).filter((l) => l.msg === 'real-time session finished');

describe('an offline model claiming the second pass', () => {
  it('gives the final tokens of a streaming model’s sessions: its words at its times, the streaming words partial meanwhile', async () => {
    const before = sessionLogs().length;
    const t = toneBursts(3, { gapMs: 1200 });
    const frames = await streamRealtime(s, Buffer.from(t.pcm16.buffer), { model: 'stt-rt-v4', enable_text_formatting: false, enable_endpoint_detection: true });
    expect(frames.find((f) => f.error_type)).toBeUndefined();
    expect(frames.at(-1)?.finished).toBe(true);
    const finals = finalWords(frames);
    expect(finals.map((tk) => tk.text.trim())).toEqual([PLAIN, PLAIN, PLAIN]);
    // The offline model times each at its burst's start (the streaming one at its end), on the stream's clock.
    finals.forEach((tk, i) => expect(Math.abs(tk.start_ms! - t.bursts[i]!.startMs)).toBeLessThanOrEqual(100));
    // Endpoints still come from the streaming model's pauses.
    expect(frames.flatMap((f) => f.tokens).filter((tk) => tk.is_final && tk.text === '<end>').length).toBeGreaterThanOrEqual(2);
    expect(new Set(partialWords(frames).map((tk) => tk.text.trim()))).toEqual(new Set(['yes']));
    await expect.poll(() => sessionLogs().length, { timeout: 10_000 }).toBeGreaterThan(before);
    expect(sessionLogs().at(-1)?.second_pass).toEqual({ decoded: 3, early: 0, skipped: 0, late: 0, failed: 0 });
  }, 90_000);

  it('gives the final tokens of the built-in real-time model’s sessions too', async () => {
    const before = sessionLogs().length;
    const file = await makeSpeech(path.join(root, 'two.raw'), 'The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background.', {
      padSeconds: 1.5,
      format: 's16le',
    });
    const pcm = readFileSync(file);
    const frames = await streamRealtime(s, pcm, { model: 'parlance-rt-en-v1', enable_text_formatting: false });
    expect(frames.find((f) => f.error_type)).toBeUndefined();
    const finals = finalWords(frames);
    // pocketsphinx's own words were the partial results.
    expect(partialWords(frames).some((tk) => /^[a-z']+$/.test(tk.text.trim()))).toBe(true);
    await expect.poll(() => sessionLogs().length, { timeout: 10_000 }).toBeGreaterThan(before);
    const report = sessionLogs().at(-1)?.second_pass as { decoded: number; late: number; skipped: number; failed: number };
    expect(report.decoded).toBeGreaterThanOrEqual(1);
    expect(report.failed).toBe(0);
    expect(finals.map((tk) => tk.text.trim())).toContain(PLAIN);
    // An utterance finalized while the client sends faster than real time waits only briefly for its second pass
    // (the wait rules): pocketsphinx's words are final there, counted late (or skipped); every other final is the model's.
    if (report.late + report.skipped === 0) expect(new Set(finals.map((tk) => tk.text.trim()))).toEqual(new Set([PLAIN]));
  }, 120_000);

  it('decodes with a session’s context terms as hotwords', async () => {
    const t = toneBursts(2, { gapMs: 1200 });
    const frames = await streamRealtime(s, Buffer.from(t.pcm16.buffer), {
      model: 'stt-rt-v4',
      enable_text_formatting: false,
      enable_endpoint_detection: true,
      context: { terms: [HOTWORD] },
    });
    expect(frames.find((f) => f.error_type)).toBeUndefined();
    expect(finalWords(frames).map((tk) => tk.text.trim())).toEqual([HOTWORD, HOTWORD]);
  }, 60_000);
});
