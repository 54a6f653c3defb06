// A finished transcription in OpenAI's response formats. Segments are the transcript's cues (src/text/subtitles.ts):
// split at sentence ends, pauses and speaker changes, with the real times of the recognised words.
import { deflateSync } from 'node:zlib';
import { nonSpeechShare } from '../../audio/speech-map.js';
import { type Cue, cuesOf, toSrt, toVtt } from '../../text/subtitles.js';
import { languageName } from '../models/catalog.js';
import type { DiarizedSegment, Segment, TranscriptionFormat, TranscriptionVerbose, Word } from './schemas.js';
import type { FinishedAudio } from './service.js';

export type Rendered = { json: Record<string, unknown> } | { text: string };

export interface RenderRequest {
  format: TranscriptionFormat;
  /** timestamp_granularities (verbose_json); default segment. */
  granularities?: readonly ('word' | 'segment')[];
  /** include[] = logprobs (json). */
  logprobs?: boolean;
}

const seconds = (ms: number) => Math.round(ms) / 1000;

/** The transcript's cues with times kept inside the audio (an engine's last word may end past the decoded audio). */
export function cuesOfResult(r: FinishedAudio): Cue[] {
  const clamp = (ms: number) => (r.durationMs > 0 ? Math.min(Math.max(0, ms), r.durationMs) : Math.max(0, ms));
  return cuesOf(r.tokens).map((c) => ({
    ...c,
    startMs: clamp(c.startMs),
    endMs: clamp(c.endMs),
    words: c.words.map((w) => ({ ...w, startMs: clamp(w.startMs), endMs: clamp(w.endMs) })),
  }));
}

/** What the cue says in the response's language: its translation when the task was translation. */
const shown = (c: Cue, r: FinishedAudio) => (r.task === 'translate' ? (c.translation ?? c.text) : c.text);

/** The whole text: for a translation, the translated tokens and the speech that needed none. */
export function outputText(r: FinishedAudio): string {
  if (r.task === 'transcribe') return r.text.trim();
  return r.tokens
    .filter((t) => t.translation_status !== 'original')
    .map((t) => t.text)
    .join('')
    .trim();
}

/** Whisper's compression ratio: text bytes over their zlib-compressed size (repetitive output scores high). */
function compressionRatio(text: string): number {
  const bytes = Buffer.from(text, 'utf8');
  return bytes.length ? Math.round((bytes.length / deflateSync(bytes).length) * 1e4) / 1e4 : 0;
}

const logprob = (confidence: number) => Math.log(Math.min(1, Math.max(confidence, 1e-6)));

function segment(c: Cue, id: number, r: FinishedAudio): Segment {
  const text = shown(c, r);
  const avg = c.words.reduce((s, w) => s + logprob(w.confidence), 0) / c.words.length;
  return {
    id,
    seek: Math.floor(c.startMs / 10),
    start: seconds(c.startMs),
    end: seconds(c.endMs),
    text: ` ${text}`,
    tokens: [],
    temperature: 0,
    avg_logprob: Math.round(avg * 1e4) / 1e4,
    compression_ratio: compressionRatio(text),
    // The share of the segment the voice activity detector heard no speech in (Whisper's is a model's guess).
    no_speech_prob: r.speech ? nonSpeechShare(r.speech, c.startMs, c.endMs) : 0,
  };
}

/** Words as OpenAI lists them: without the punctuation the formatter attached. */
function words(cues: readonly Cue[]): Word[] {
  return cues.flatMap((c) =>
    c.words.flatMap((w) => {
      const word = w.text.replace(/^[("'“‘[]+|[.,?!;:"'”’)\]…]+$/gu, '');
      return word ? [{ word, start: seconds(w.startMs), end: seconds(w.endMs) }] : [];
    }),
  );
}

/** A speaker label that is a name (a known or enrolled speaker): unknown voices are numbered "1", "2", ... */
const isName = (speaker: string) => !/^\d+$/.test(speaker);

/**
 * Diarized speakers as OpenAI labels them: a known speaker by its name, the others A, B, ... in order of first
 * appearance (skipping a letter a known speaker is called).
 */
function speakerLetters(cues: readonly Cue[]): (speaker: string | undefined) => string {
  const names = new Set(cues.flatMap((c) => (c.speaker !== undefined && isName(c.speaker) ? [c.speaker] : [])));
  const letters = new Map<string, string>();
  let next = 0;
  const fresh = () => {
    let letter: string;
    do letter = letterOf(next++);
    while (names.has(letter));
    return letter;
  };
  for (const c of cues) if (c.speaker !== undefined && !isName(c.speaker) && !letters.has(c.speaker)) letters.set(c.speaker, fresh());
  const first = [...letters.values()][0] ?? fresh();
  return (speaker) => (speaker === undefined ? first : isName(speaker) ? speaker : (letters.get(speaker) ?? first));
}

const letterOf = (n: number): string => (n < 26 ? String.fromCharCode(65 + n) : `${letterOf(Math.floor(n / 26) - 1)}${String.fromCharCode(65 + (n % 26))}`);

export function diarizedSegments(cues: readonly Cue[]): DiarizedSegment[] {
  const letter = speakerLetters(cues);
  return cues.map((c, i) => ({
    type: 'transcript.text.segment',
    id: `seg_${i}`,
    start: seconds(c.startMs),
    end: seconds(c.endMs),
    text: c.text,
    speaker: letter(c.speaker),
  }));
}

/** Whether the response has verbose_json segments (whose no_speech_prob needs the audio's speech map). */
export const withSegments = (format: TranscriptionFormat, granularities?: readonly ('word' | 'segment')[]): boolean =>
  format === 'verbose_json' && (!granularities?.length || granularities.includes('segment'));

export function render(r: FinishedAudio, req: RenderRequest): Rendered {
  const cues = cuesOfResult(r);
  const text = outputText(r);
  const usage = { type: 'duration' as const, seconds: Math.ceil(r.durationMs / 1000) };
  const view = r.task === 'translate' ? 'translation' : 'original';
  switch (req.format) {
    case 'text':
      return { text: `${text}\n` };
    case 'srt':
      return { text: toSrt(cues, { text: view }) };
    case 'vtt':
      return { text: toVtt(cues, { text: view }) };
    case 'verbose_json': {
      const g = req.granularities?.length ? req.granularities : ['segment'];
      const body: TranscriptionVerbose = {
        task: r.task,
        language: languageName(r.language).toLowerCase(),
        duration: seconds(r.durationMs),
        text,
        ...(g.includes('segment') ? { segments: cues.map((c, i) => segment(c, i, r)) } : {}),
        ...(g.includes('word') && r.task === 'transcribe' ? { words: words(cues) } : {}),
        usage,
      };
      return { json: body };
    }
    case 'diarized_json':
      return { json: { task: 'transcribe', duration: seconds(r.durationMs), text, segments: diarizedSegments(cues), usage } };
    case 'json': {
      if (r.task === 'translate') return { json: { text } };
      const logprobs = req.logprobs
        ? r.tokens.map((t) => ({ token: t.text, logprob: Math.round(logprob(t.confidence) * 1e4) / 1e4, bytes: [...Buffer.from(t.text, 'utf8')] }))
        : undefined;
      return { json: { text, ...(logprobs ? { logprobs } : {}), usage } };
    }
  }
}

/** The events of stream=true, as OpenAI sends them: text deltas (with segment events when diarized), then done. */
export function streamEvents(r: FinishedAudio, diarized: boolean): Record<string, unknown>[] {
  const events: Record<string, unknown>[] = [];
  if (diarized) {
    const cues = cuesOfResult(r);
    diarizedSegments(cues).forEach((seg, i) => {
      cues[i]!.words.forEach((w, j) => events.push({ type: 'transcript.text.delta', delta: i || j ? ` ${w.text}` : w.text, segment_id: seg.id }));
      events.push(seg);
    });
  } else for (const t of r.tokens) if (t.translation_status !== 'original') events.push({ type: 'transcript.text.delta', delta: t.text });
  events.push({ type: 'transcript.text.done', text: outputText(r) });
  return events;
}
