// The in-process WAV check against ffprobe's on the same files: real ffmpeg-written WAVs of every in-process codec,
// channel layouts, metadata chunks, RF64 and a cut-off upload describe themselves the same way to both; other codecs
// and broken headers are left to ffprobe.
import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSpeech, tempDir } from '../../test/harness.js';
import { probeWithFfmpeg } from './probe.js';
import { probeWavHeader } from './wav-probe.js';

const execFileP = promisify(execFile);
const dir = tempDir('parlance-wav-probe-');
let speech: string;

async function encode(name: string, args: string[]): Promise<string> {
  const out = path.join(dir, name);
  await execFileP('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-i', speech, ...args, out]);
  return out;
}

beforeAll(async () => {
  speech = await makeSpeech(path.join(dir, 'speech.wav'), 'The birch canoe slid on the smooth planks.');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('probeWavHeader', () => {
  const same: [string, string[]][] = [
    ['s16 mono 16 kHz', ['-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le']],
    ['s24 stereo 44.1 kHz', ['-ac', '2', '-ar', '44100', '-c:a', 'pcm_s24le']],
    ['s32 mono 8 kHz', ['-ac', '1', '-ar', '8000', '-c:a', 'pcm_s32le']],
    ['u8 mono', ['-c:a', 'pcm_u8']],
    ['f32 stereo 48 kHz', ['-ac', '2', '-ar', '48000', '-c:a', 'pcm_f32le']],
    ['f64 mono', ['-c:a', 'pcm_f64le']],
    ['mu-law 8 kHz', ['-ar', '8000', '-c:a', 'pcm_mulaw']],
    ['A-law 8 kHz', ['-ar', '8000', '-c:a', 'pcm_alaw']],
    ['six channels (extensible)', ['-ac', '6', '-c:a', 'pcm_s16le']],
    ['with a LIST metadata chunk', ['-metadata', 'title=a title', '-metadata', 'artist=someone', '-c:a', 'pcm_s16le']],
    ['RF64', ['-rf64', 'always', '-c:a', 'pcm_s16le']],
  ];
  for (const [what, args] of same) {
    it(`describes ${what} as ffprobe does`, async () => {
      const file = await encode(`${what.replace(/\W+/g, '-')}.wav`, args);
      const mine = await probeWavHeader(file);
      expect(mine).toBeDefined();
      const theirs = await probeWithFfmpeg(file);
      expect({ ...mine, durationMs: undefined }).toEqual({ ...theirs, durationMs: undefined });
      expect(Math.abs(mine!.durationMs! - theirs.durationMs!)).toBeLessThanOrEqual(1);
    });
  }

  it('counts the samples a cut-off upload holds, not the length its header declares', async () => {
    const file = await encode('cut.wav', ['-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le']);
    const whole = readFileSync(file);
    const cut = path.join(dir, 'cut-off.wav');
    writeFileSync(cut, whole.subarray(0, whole.length - 16_000)); // half a second less
    const mine = await probeWavHeader(cut);
    const full = await probeWavHeader(file);
    expect(full!.durationMs! - mine!.durationMs!).toBe(500);
  });

  it('leaves codecs it does not decode, and what is not a WAV, to ffprobe', async () => {
    const adpcm = await encode('adpcm.wav', ['-c:a', 'adpcm_ms']);
    const mp3 = await encode('speech.mp3', []);
    const headerOnly = path.join(dir, 'header-only.wav');
    writeFileSync(headerOnly, readFileSync(await encode('h.wav', ['-c:a', 'pcm_s16le'])).subarray(0, 44));
    const junk = path.join(dir, 'junk.wav');
    writeFileSync(junk, Buffer.concat([Buffer.from('RIFF\x10\x00\x00\x00WAVEfmt \x02\x00\x00\x00', 'latin1'), Buffer.alloc(100, 7)]));
    for (const file of [adpcm, mp3, headerOnly, junk]) expect(await probeWavHeader(file), file).toBeUndefined();
  });
});
