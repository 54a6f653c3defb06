// Transcript tokens → timed segments (cues), and the subtitle and text renderings built from them: SRT, WebVTT and
// plain text. One segmentation serves the native transcript exports and the OpenAI-compatible responses
// (verbose_json segments, srt, vtt), so the same audio gives the same segments everywhere.

/** A transcript token as stored: originals carry times; translated tokens (`translation_status: translation`) do not. */
export interface SegmentToken {
  text: string;
  start_ms?: number;
  end_ms?: number;
  confidence: number;
  speaker?: string;
  /** Multichannel transcripts: the channel (0-based) the token was heard on. */
  channel?: number;
  translation_status?: string;
}

export interface CueWord {
  text: string;
  startMs: number;
  endMs: number;
  confidence: number;
}

export interface Cue {
  startMs: number;
  endMs: number;
  /** The recognised words, joined. */
  text: string;
  words: CueWord[];
  speaker?: string;
  /** Multichannel transcripts: the channel of the words. */
  channel?: number;
  /** The translation of these words, when the transcript was translated. */
  translation?: string;
}

export interface CueOptions {
  /** Silence between two words that starts a new cue. */
  pauseMs?: number;
  /** Longest cue; a long sentence is cut at the word that would exceed it. */
  maxMs?: number;
  maxChars?: number;
}

/** The formatter ends a sentence at 700 ms of silence (src/text/sentences.ts); unformatted text splits there too. */
export const CUE_PAUSE_MS = 700;
/** Subtitle norms: a cue readable in its time on two lines of about 42 characters. */
export const CUE_MAX_MS = 7000;
export const CUE_MAX_CHARS = 84;

const SENTENCE_END = /[.?!…]["')\]]*$/;
/** Title abbreviations the formatter writes ("Mr." + "Smith"): their stop ends no sentence. */
const ABBREVIATION = /^(mr|mrs|ms|dr|st|jr|sr|vs|prof)\.$/i;
const endsSentence = (word: string) => SENTENCE_END.test(word) && !ABBREVIATION.test(word);

const timed = (t: SegmentToken): t is SegmentToken & { start_ms: number; end_ms: number } => t.start_ms !== undefined && t.end_ms !== undefined;

function cueOf(words: CueWord[], speaker: string | undefined, translation?: string): Cue {
  return {
    startMs: words[0]!.startMs,
    endMs: words[words.length - 1]!.endMs,
    text: words.map((w) => w.text).join(' '),
    words,
    ...(speaker !== undefined ? { speaker } : {}),
    ...(translation !== undefined ? { translation } : {}),
  };
}

/**
 * Cues split at sentence ends, pauses, speaker changes and the length caps. A translated stretch (its originals and
 * the translation that follows them) stays one cue: a translation has no times of its own to split it by. A
 * multichannel transcript's cues are made from each channel's tokens alone (two people talking at once stay two
 * cues, not one cut at every word) and given in order of their start.
 */
export function cuesOf(tokens: readonly SegmentToken[], opts: CueOptions = {}): Cue[] {
  if (!tokens.some((t) => t.channel !== undefined)) return channelCues(tokens, opts);
  const channels = [...new Set(tokens.map((t) => t.channel ?? 0))].sort((a, b) => a - b);
  return channels
    .flatMap((channel) =>
      channelCues(
        tokens.filter((t) => (t.channel ?? 0) === channel),
        opts,
      ).map((c) => ({ ...c, channel })),
    )
    .sort((a, b) => a.startMs - b.startMs || a.channel - b.channel);
}

function channelCues(tokens: readonly SegmentToken[], opts: CueOptions): Cue[] {
  const pauseMs = opts.pauseMs ?? CUE_PAUSE_MS;
  const maxMs = opts.maxMs ?? CUE_MAX_MS;
  const maxChars = opts.maxChars ?? CUE_MAX_CHARS;
  const groups: { words: (CueWord & { speaker?: string })[]; translation?: string }[] = [];
  for (const t of tokens) {
    let group = groups[groups.length - 1];
    if (timed(t)) {
      if (!group || group.translation !== undefined) groups.push((group = { words: [] }));
      const text = t.text.trim();
      if (text)
        group.words.push({ text, startMs: t.start_ms, endMs: t.end_ms, confidence: t.confidence, ...(t.speaker !== undefined ? { speaker: t.speaker } : {}) });
    } else if (group && t.translation_status === 'translation') group.translation = `${group.translation ?? ''}${t.text}`;
  }
  const cues: Cue[] = [];
  for (const g of groups) {
    if (!g.words.length) continue;
    const speakerOf = (w: { speaker?: string }) => w.speaker;
    if (g.translation !== undefined) {
      cues.push(cueOf(g.words.map(plain), speakerOf(g.words[0]!), g.translation.trim()));
      continue;
    }
    let cur: typeof g.words = [];
    let chars = 0;
    for (const w of g.words) {
      const prev = cur[cur.length - 1];
      if (
        prev &&
        (endsSentence(prev.text) ||
          w.startMs - prev.endMs >= pauseMs ||
          w.speaker !== prev.speaker ||
          w.endMs - cur[0]!.startMs > maxMs ||
          chars + 1 + w.text.length > maxChars)
      ) {
        cues.push(cueOf(cur.map(plain), speakerOf(cur[0]!)));
        cur = [];
        chars = 0;
      }
      chars += (cur.length ? 1 : 0) + w.text.length;
      cur.push(w);
    }
    if (cur.length) cues.push(cueOf(cur.map(plain), speakerOf(cur[0]!)));
  }
  return cues;
}

const plain = ({ text, startMs, endMs, confidence }: CueWord): CueWord => ({ text, startMs, endMs, confidence });

/** HH:MM:SS,mmm (SRT) or HH:MM:SS.mmm (WebVTT). */
export function timecode(ms: number, separator: ',' | '.'): string {
  const total = Math.max(0, Math.round(ms));
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  const h = Math.floor(total / 3_600_000);
  const m = Math.floor((total % 3_600_000) / 60_000);
  const s = Math.floor((total % 60_000) / 1000);
  return `${pad(h)}:${pad(m)}:${pad(s)}${separator}${pad(total % 1000, 3)}`;
}

export interface RenderOptions {
  /** Which text a cue shows: the recognised words (default), or the translation where there is one. */
  text?: 'original' | 'translation' | 'both';
  /** Label cues with their speaker ("Speaker 1"). */
  speakers?: boolean;
  /** Label cues with their channel ("Channel 0", or "Channel 0, Speaker 1" with speakers). */
  channels?: boolean;
}

function linesOf(cue: Cue, opts: RenderOptions): string[] {
  const mode = opts.text ?? 'original';
  if (mode === 'translation') return [cue.translation ?? cue.text];
  return mode === 'both' && cue.translation !== undefined ? [cue.text, cue.translation] : [cue.text];
}

export const speakerName = (speaker: string) => `Speaker ${speaker}`;

/** Who a cue is: its channel and its speaker, as far as `opts` labels them; undefined when neither is. */
function voiceOf(c: Pick<Cue, 'speaker' | 'channel'>, opts: RenderOptions): string | undefined {
  const parts = [
    ...(opts.channels && c.channel !== undefined ? [`Channel ${c.channel}`] : []),
    ...(opts.speakers && c.speaker !== undefined ? [speakerName(c.speaker)] : []),
  ];
  return parts.length ? parts.join(', ') : undefined;
}

export function toSrt(cues: readonly Cue[], opts: RenderOptions = {}): string {
  return cues
    .map((c, i) => {
      const lines = linesOf(c, opts);
      const voice = voiceOf(c, opts);
      if (voice !== undefined) lines[0] = `${voice}: ${lines[0]}`;
      return `${i + 1}\n${timecode(c.startMs, ',')} --> ${timecode(c.endMs, ',')}\n${lines.join('\n')}\n`;
    })
    .join('\n');
}

const vttEscape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** WebVTT; speakers as voice spans (`<v Speaker 1>`), which players show and style. */
export function toVtt(cues: readonly Cue[], opts: RenderOptions = {}): string {
  const body = cues.map((c) => {
    const lines = linesOf(c, opts).map(vttEscape);
    const voice = voiceOf(c, opts);
    if (voice !== undefined) lines[0] = `<v ${voice}>${lines[0]}`;
    return `${timecode(c.startMs, '.')} --> ${timecode(c.endMs, '.')}\n${lines.join('\n')}\n`;
  });
  return `WEBVTT\n\n${body.join('\n')}`;
}

/** One line per cue; with speakers (or channels), one paragraph per turn, "Speaker 1: ...". */
export function toText(cues: readonly Cue[], opts: RenderOptions = {}): string {
  if (!opts.speakers && !opts.channels) return cues.map((c) => `${linesOf(c, opts).join('\n')}\n`).join('');
  const turns: { voice?: string; lines: string[] }[] = [];
  for (const c of cues) {
    const last = turns[turns.length - 1];
    const voice = voiceOf(c, opts);
    if (last && last.voice === voice) last.lines.push(...linesOf(c, opts));
    else turns.push({ voice, lines: linesOf(c, opts) });
  }
  return turns.map((t) => `${t.voice !== undefined ? `${t.voice}: ` : ''}${t.lines.join(' ')}\n`).join('\n');
}

export type ExportFormat = 'srt' | 'vtt' | 'txt';

/**
 * A stored transcript as a file: speakers labelled when it was diarized, channels when it is multichannel, translations
 * under their originals.
 */
export function exportTranscript(tokens: readonly SegmentToken[], format: ExportFormat): string {
  const cues = cuesOf(tokens);
  const opts: RenderOptions = {
    text: 'both',
    speakers: tokens.some((t) => t.speaker !== undefined),
    channels: tokens.some((t) => t.channel !== undefined),
  };
  return format === 'srt' ? toSrt(cues, opts) : format === 'vtt' ? toVtt(cues, opts) : toText(cues, opts);
}
