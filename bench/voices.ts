// Cloned voices suite: how much closer a cloned voice's speech is to its reference speaker than a random
// built-in voice, on the matching features (profileDistance) and on pitch alone (semitones between medians).
// References are real human recordings from Debian's pocketsphinx-testdata; each becomes a voice through the
// API of a real `parlance serve`, then the same held-out Harvard sentences are spoken by the cloned voice, by
// its base voice without adaptation, and by every curated built-in voice of the model (the "random voice"
// expectation is their mean). Also: preparation time per voice and model, first-byte latency cloned vs built-in.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { decodeToBuffer } from '../src/audio/decode.js';
import { pcmToFloat, type VoiceProfile, voiceProfile } from '../src/audio/features.js';
import { mfccSpread, pitchDistance, profileDistance } from '../src/modules/voices/cloning.js';
import { startParlance, type Parlance } from '../test/harness.js';
import { benchServerEnv, HARVARD_SENTENCES, round, type Row, summarize, type SuiteOptions, type SuiteResult } from './lib.js';

const DATA = '/usr/share/pocketsphinx/test/data';
const MODELS = ['parlance-tts-espeak-v1', 'parlance-tts-flite-v1'];
/** Held out: the built-in voice profiles are measured on the first three sentences. */
const TEXT = HARVARD_SENTENCES.slice(3, 8)
  .map((s) => `${s.charAt(0).toUpperCase()}${s.slice(1)}.`)
  .join(' ');

interface VoiceRecord {
  id: string;
  models: { model: string; status: string; error_type: string | null; base_voice: string | null }[];
}

/** The human recordings: WAVs as they are, headerless 16 kHz s16le .raw files wrapped as WAV. */
function references(work: string, quick: boolean): { name: string; file: string }[] {
  const wavs = [
    ...['0870', '0880', '0890', '0920', '0930'].map((n) => `librivox/sense_and_sensibility_01_austen_64kb-${n}.wav`),
    ...['001', '002', '003', '004', '005'].map((n) => `cards/${n}.wav`),
  ];
  const raws = ['goforward.raw', 'numbers.raw', 'something.raw', 'tidigits/dhd.2934z.raw'];
  const out = wavs.map((w) => ({ name: path.basename(w, '.wav'), file: path.join(DATA, w) }));
  for (const r of raws) {
    const file = path.join(work, `${path.basename(r, '.raw')}.wav`);
    execFileSync('ffmpeg', ['-nostdin', '-v', 'error', '-f', 's16le', '-ar', '16000', '-ac', '1', '-i', path.join(DATA, r), '-y', file]);
    out.push({ name: path.basename(r, '.raw'), file });
  }
  const present = out.filter((r) => existsSync(r.file));
  return quick ? present.slice(0, 4) : present;
}

async function speak(s: Parlance, model: string, voice: string): Promise<{ pcm: Buffer; ttfb: number }> {
  const t0 = performance.now();
  const res = await fetch(`${s.url}/tts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, language: 'en', voice, audio_format: 'pcm_s16le', sample_rate: 16000, text: TEXT }),
  });
  if (res.status !== 200) throw new Error(`POST /tts ${model}/${voice}: ${res.status} ${await res.text()}`);
  const reader = res.body!.getReader();
  const parts: Buffer[] = [];
  let ttfb = -1;
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    if (ttfb < 0) ttfb = performance.now() - t0;
    parts.push(Buffer.from(r.value));
  }
  return { pcm: Buffer.concat(parts), ttfb };
}

const profileOf = (pcm16k: Buffer): VoiceProfile => voiceProfile(pcmToFloat(pcm16k));
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

export async function run(opts: SuiteOptions): Promise<SuiteResult> {
  const work = mkdtempSync(path.join(tmpdir(), 'parlance-bench-voices-'));
  opts.cleanup.add('remove work dir', () => rmSync(work, { recursive: true, force: true }));
  const refs = references(work, opts.quick);
  const s = await startParlance({ env: benchServerEnv({ PARLANCE_TTS_MODELS: MODELS.join(','), PARLANCE_VOICE_CONCURRENCY: '2' }) });
  opts.cleanup.add(`stop server ${s.url}`, () => s.stop());
  const auth = { authorization: `Bearer ${s.apiKey}` };
  const catalog = (await (await fetch(`${s.url}/v1/tts-models`, { headers: auth })).json()) as {
    models: { id: string; voices: { id: string; description: string }[] }[];
  };

  // Built-in voices' speech of the held-out text, once per model (the curated voices: the cloner's candidates).
  const builtin = new Map<string, Map<string, VoiceProfile>>();
  const builtinTtfb: number[] = [];
  for (const model of MODELS) {
    const voices = catalog.models
      .find((m) => m.id === model)!
      .voices.filter((v) => !v.description.startsWith('espeak-ng voice variant') && !v.description.includes('limited-domain'));
    const profiles = new Map<string, VoiceProfile>();
    const seen = new Set<string>();
    for (const v of voices) {
      // flite offers some engine voices under two names: speak each engine voice once.
      const key = v.description.replace(/^.*\(flite (\w+)\).*$/, '$1');
      if (seen.has(key)) continue;
      seen.add(key);
      const out = await speak(s, model, v.id);
      builtinTtfb.push(out.ttfb);
      profiles.set(v.id, profileOf(out.pcm));
    }
    builtin.set(model, profiles);
    opts.log(`${model}: ${profiles.size} built-in voices measured`);
  }

  // Create every reference voice, wait for all models.
  const created: { name: string; id: string; ref: VoiceProfile; createdAt: number }[] = [];
  for (const r of refs) {
    const fd = new FormData();
    fd.append('name', r.name);
    fd.append('file', new Blob([new Uint8Array(readFileSync(r.file))]), path.basename(r.file));
    const res = await fetch(`${s.url}/v1/voices`, { method: 'POST', headers: auth, body: fd });
    if (res.status !== 201) throw new Error(`create ${r.name}: ${res.status} ${await res.text()}`);
    created.push({ name: r.name, id: ((await res.json()) as VoiceRecord).id, ref: profileOf(await decodeToBuffer(r.file)), createdAt: performance.now() });
  }
  const prepSeconds: number[] = [];
  const records = new Map<string, VoiceRecord>();
  for (const c of created) {
    for (;;) {
      const v = (await (await fetch(`${s.url}/v1/voices/${c.id}`, { headers: auth })).json()) as VoiceRecord;
      if (MODELS.every((m) => v.models.find((x) => x.model === m)?.status !== 'processing')) {
        records.set(c.id, v);
        prepSeconds.push((performance.now() - c.createdAt) / 1000);
        break;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  const rows: Row[] = [];
  const perVoice: Record<string, unknown>[] = [];
  const clonedTtfb: number[] = [];
  for (const model of MODELS) {
    const profiles = builtin.get(model)!;
    const spread = mfccSpread([...profiles.values()]);
    const d = { cloned: [] as number[], base: [] as number[], random: [] as number[], pCloned: [] as number[], pBase: [] as number[], pRandom: [] as number[] };
    let closerThanRandom = 0;
    let nearestRank = 0;
    for (const c of created) {
      const status = records.get(c.id)!.models.find((m) => m.model === model)!;
      if (status.status !== 'ready') {
        perVoice.push({ model, reference: c.name, status: status.status, error_type: status.error_type });
        continue;
      }
      const out = await speak(s, model, c.id);
      clonedTtfb.push(out.ttfb);
      const cloned = profileOf(out.pcm);
      const base = profiles.get(status.base_voice!)!;
      const randomD = [...profiles.values()].map((p) => profileDistance(c.ref, p, spread));
      const randomP = [...profiles.values()].map((p) => pitchDistance(c.ref, p));
      const row = {
        model,
        reference: c.name,
        base_voice: status.base_voice,
        ref_pitch_hz: round(c.ref.pitchMedianHz, 1),
        cloned_pitch_hz: round(cloned.pitchMedianHz, 1),
        distance: {
          cloned: round(profileDistance(c.ref, cloned, spread), 3),
          base: round(profileDistance(c.ref, base, spread), 3),
          random_mean: round(mean(randomD), 3),
        },
        pitch_semitones: { cloned: round(pitchDistance(c.ref, cloned), 2), base: round(pitchDistance(c.ref, base), 2), random_mean: round(mean(randomP), 2) },
      };
      perVoice.push(row);
      d.cloned.push(row.distance.cloned);
      d.base.push(row.distance.base);
      d.random.push(mean(randomD));
      d.pCloned.push(row.pitch_semitones.cloned);
      d.pBase.push(row.pitch_semitones.base);
      d.pRandom.push(mean(randomP));
      if (row.distance.cloned < mean(randomD)) closerThanRandom++;
      // Where the cloned output ranks among all built-in voices (1 = closer than every one of them).
      nearestRank += 1 + randomD.filter((x) => x < row.distance.cloned).length;
    }
    const n = d.cloned.length;
    rows.push({
      benchmark: `${model}: feature distance to reference, cloned / base voice / random built-in (mean of ${n})`,
      result: `${round(mean(d.cloned), 2)} / ${round(mean(d.base), 2)} / ${round(mean(d.random), 2)} (cloned ${round(mean(d.random) / mean(d.cloned), 2)}× closer than random)`,
      target: 'cloned < random',
      met: n > 0 && mean(d.cloned) < mean(d.random),
    });
    rows.push({
      benchmark: `${model}: pitch distance to reference in semitones, cloned / base voice / random built-in`,
      result: `${round(mean(d.pCloned), 2)} / ${round(mean(d.pBase), 2)} / ${round(mean(d.pRandom), 2)}`,
      target: 'cloned < random',
      met: n > 0 && mean(d.pCloned) < mean(d.pRandom),
    });
    rows.push({
      benchmark: `${model}: references whose cloned voice is closer than the random mean; mean rank among ${profiles.size + 1} voices`,
      result: `${closerThanRandom} of ${n}; rank ${round(nearestRank / Math.max(1, n), 2)}`,
      target: '',
      met: null,
    });
  }
  const prep = summarize(prepSeconds);
  rows.push({
    benchmark: `preparation time per voice, ${MODELS.length} models, ${created.length} voices queued at once (p50 / max)`,
    result: `${round(prep.p50, 1)} / ${round(prep.max, 1)} s`,
    target: '',
    met: null,
  });
  const ct = summarize(clonedTtfb);
  const bt = summarize(builtinTtfb);
  rows.push({
    benchmark: 'POST /tts first byte, 5 sentences, cloned vs built-in voice (p50)',
    result: `${round(ct.p50, 0)} vs ${round(bt.p50, 0)} ms`,
    target: '',
    met: null,
  });
  return {
    rows,
    raw: {
      text: TEXT,
      references: refs.map((r) => r.name),
      per_voice: perVoice,
      preparation_seconds: prepSeconds,
      ttfb_ms: { cloned: clonedTtfb, builtin: builtinTtfb },
    },
  };
}
