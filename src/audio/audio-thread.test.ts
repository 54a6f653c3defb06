// The audio worker thread from the compiled dist/ (the worker is a compiled file): voice activity detection and raw
// output there give exactly what the same code gives inline, and the work stays off the main thread (the event loop).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { cpuWhile, ROOT } from '../../test/harness.js';
import { TESTDATA } from '../../test/real-speech.js';
import type * as ThreadModule from './audio-thread.js';
import { RawOutputEncoder } from './raw-output.js';
import { loadVad, type VadFrame } from './vad.js';

const DIST = path.join(ROOT, 'dist', 'audio', 'audio-thread.js');
let thread: typeof ThreadModule;

beforeAll(async () => {
  if (!existsSync(DIST)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  thread = (await import(pathToFileURL(DIST).href)) as typeof ThreadModule;
}, 120_000);

/** A real recording's PCM (16 kHz s16le, after the WAV header). */
const speech = () => readFileSync(path.join(TESTDATA, 'librivox', 'sense_and_sensibility_01_austen_64kb-0870.wav')).subarray(44);

async function frames(vad: { createStream(): { push(b: Uint8Array): Promise<VadFrame[]>; flush(): Promise<VadFrame[]> } }, pcm: Buffer): Promise<VadFrame[]> {
  const s = vad.createStream();
  const out: VadFrame[] = [];
  for (let off = 0; off < pcm.length; off += 3201) out.push(...(await s.push(pcm.subarray(off, off + 3201))));
  out.push(...(await s.flush()));
  return out;
}

describe('the audio worker thread', () => {
  it('detects voice activity off the event loop with the same decisions as inline, in both lanes', async () => {
    // Enough CPU time to tell where it went: the kernel counts a thread's CPU in 10 ms ticks.
    const pcm = Buffer.concat(Array.from({ length: 12 }, speech));
    const inlineVad = await loadVad();
    let inline: VadFrame[] = [];
    const inlineCpu = await cpuWhile(async () => (inline = await frames(inlineVad, pcm)));
    for (const lane of ['live', 'batch'] as const) {
      const vad = await thread.loadVadOffThread({ lane });
      expect(vad.backend).toBe('silero');
      let off: VadFrame[] = [];
      const cpu = await cpuWhile(async () => (off = await frames(vad, pcm)));
      console.info(
        `audio thread (${lane}): main thread CPU ${cpu.mainMs} ms, other threads ${Math.round(cpu.otherMs)} ms; inline: main ${inlineCpu.mainMs} ms`,
      );
      expect(off.map((f) => f.speech)).toEqual(inline.map((f) => f.speech));
      off.forEach((f, i) => expect(f.probability).toBeCloseTo(inline[i]!.probability, 5));
      expect(off.some((f) => f.speech)).toBe(true);
      // The model runs on the audio thread: the main thread only passes messages, a small part of what the same work
      // costs it inline. (CPU time, not a timer's lateness: a busy machine makes neither grow.)
      expect(cpu.mainMs).toBeLessThan(inlineCpu.mainMs / 3);
    }
  });

  it('encodes raw output and trims silence as the inline code does', async () => {
    const pcm = speech();
    const enc = await thread.openRawEncoder({ inputRate: 16000, outputRate: 8000, format: 'pcm_mulaw' });
    const parts: Buffer[] = [];
    for (let off = 0; off < pcm.length; off += 4001) parts.push(await enc.push(pcm.subarray(off, off + 4001)));
    parts.push(await enc.end());
    const inline = new RawOutputEncoder({ inputRate: 16000, outputRate: 8000, format: 'pcm_mulaw' });
    const expected = Buffer.concat([inline.push(pcm), inline.end()]);
    expect(Buffer.concat(parts).equals(expected)).toBe(true);
    const padded = Buffer.concat([Buffer.alloc(16000), pcm.subarray(0, 32000), Buffer.alloc(16000)]);
    const trimmed = await thread.trimSilenceOffThread(padded, 16000);
    expect(trimmed.length).toBeLessThan(padded.length);
    expect(trimmed.length).toBeGreaterThan(16000);
  });
});
