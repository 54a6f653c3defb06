// SSML on engines that read plain text only: each run of text with one prosody is synthesized on its own, at the
// engine's rate times the run's (clamped to 0.5–2), shifted in pitch after synthesis (formant-preserving, as cloned
// voices are) and scaled in volume; a break becomes a pause chunk (its exact silence is placed by ssml/pauses.ts).
// Engines still cut each run into sentences, so the first audio comes as early as with plain text.
import { shiftPitch } from '../../../audio/pitch-shift.js';
import type { SynthesisChunk, SynthesisOptions, TtsEngine } from '../interface.js';
import type { Prosody, SsmlDocument, SsmlItem } from './parse.js';

/** Engine speed bounds once a run's rate multiplies the request's speed. */
export const SSML_SPEED_MIN = 0.5;
export const SSML_SPEED_MAX = 2;

export const clampSpeed = (speed: number): number => Math.min(SSML_SPEED_MAX, Math.max(SSML_SPEED_MIN, speed));

export type SsmlRun = { kind: 'text'; text: string; prosody: Prosody } | { kind: 'break'; seconds: number };

const sameProsody = (a: Prosody, b: Prosody) => a.rate === b.rate && a.pitch === b.pitch && a.volume === b.volume;

/** The items as runs: neighbouring text of one prosody joined (whitespace between runs of any prosody kept). */
export function ssmlRuns(items: readonly SsmlItem[]): SsmlRun[] {
  const runs: SsmlRun[] = [];
  for (const item of items) {
    const last = runs.at(-1);
    if (item.kind === 'break') runs.push({ ...item });
    else if (last?.kind === 'text' && (sameProsody(last.prosody, item.prosody) || !item.text.trim())) last.text += item.text;
    else if (item.text.trim()) runs.push({ kind: 'text', text: item.text, prosody: item.prosody });
  }
  for (const r of runs) if (r.kind === 'text') r.text = r.text.replace(/\s+/g, ' ').trim();
  return runs;
}

/** s16le samples scaled by `db` decibels (clipped at full scale); silence for -Infinity. */
export function scalePcm(pcm: Buffer, db: number): Buffer {
  if (db === 0 || !pcm.length) return pcm;
  const gain = db === -Infinity ? 0 : 10 ** (db / 20);
  const out = Buffer.allocUnsafe(pcm.length);
  for (let i = 0; i + 1 < pcm.length; i += 2) out.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(pcm.readInt16LE(i) * gain))), i);
  return out;
}

export async function* translateSsml(
  engine: TtsEngine,
  doc: SsmlDocument,
  voice: string,
  language: string,
  opts: SynthesisOptions = {},
): AsyncGenerator<SynthesisChunk> {
  let rate = engine.voices.find((v) => v.id === voice)?.sampleRate ?? 0;
  for (const run of ssmlRuns(doc.items)) {
    if (run.kind === 'break') {
      yield { pcm: Buffer.alloc(0), sampleRate: rate, text: '', pauseSeconds: run.seconds };
      continue;
    }
    const { pitch, volume } = run.prosody;
    const speed = clampSpeed((opts.speed ?? 1) * run.prosody.rate);
    for await (const ch of engine.synthesize(run.text, voice, language, { ...opts, speed })) {
      rate = ch.sampleRate;
      let pcm = ch.pcm;
      if (pcm.length && pitch !== 0) pcm = await shiftPitch(pcm, ch.sampleRate, pitch, { signal: opts.signal });
      yield { ...ch, pcm: scalePcm(pcm, volume) };
    }
  }
}
