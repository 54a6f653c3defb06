// The turns and items of an OpenAI Realtime transcription session (realtime-session.ts): the live session's final
// words, endpoints and finalized marks become speech_started / speech_stopped, committed, deltas and completed events.
// Words are routed to items by time (the audio offset of each commit), so words still being decoded land in the item
// their audio belongs to; deltas are an item's final words, sent once the item is committed (OpenAI's order).
import { randomBytes } from 'node:crypto';
import { isMark, type TranscriptUpdate, type TranscriptWord } from '../realtime/live-events.js';
import type { TranscriptionSettings } from './realtime-config.js';
import type { LogProb, ServerEvent } from './realtime-schemas.js';

/** An id as OpenAI makes them: `prefix_` and 24 letters and digits. */
export const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`;

/** What the turns read of their session, and how they send. */
export interface TurnsHost {
  emit(event: ServerEvent): void;
  /** The session's settings now (logprobs, turn detection). */
  settings(): TranscriptionSettings;
  /** Audio appended so far, ms. */
  appendedMs(): number;
}

interface Item {
  id: string;
  /** Audio offset where the item's audio starts, ms. */
  startMs: number;
  text: string;
  /** Final words not yet sent as deltas (the item is not committed yet). */
  unsent: Piece[];
  logprobs: LogProb[];
  speechStartMs?: number;
  lastEndMs?: number;
}

/** A final word as a delta carries it: its text and, when asked for, its log probability. */
interface Piece {
  text: string;
  logprob?: LogProb;
}

interface Committed {
  item: Item;
  /** Audio offset where the item's audio ends, ms. */
  endMs: number;
}

export class RealtimeTurns {
  private current: Item;
  /** Committed items whose `<fin>` (manual commits) is still to come, oldest first. */
  private awaiting: Committed[] = [];
  private lastItemId: string | null = null;
  /** Words whose audio starts before this offset were cleared. */
  private clearedUntilMs = 0;

  constructor(private readonly host: TurnsHost) {
    this.current = this.newItem(0);
  }

  /** Audio offset where the uncommitted audio starts, ms. */
  get openStartMs(): number {
    return this.current.startMs;
  }

  /** `input_audio_buffer.commit`: the open item is committed at `endMs` and completed once its words are all in. */
  commitByClient(endMs: number): void {
    const item = this.commit(endMs);
    this.awaiting.push({ item, endMs });
  }

  /** `input_audio_buffer.clear` at `atMs`: the words of the uncommitted audio are dropped. */
  clear(atMs: number): void {
    this.clearedUntilMs = atMs;
    this.current = this.newItem(atMs);
    this.host.emit({ type: 'input_audio_buffer.cleared' });
  }

  /** A transcript update of the live session. */
  update(update: TranscriptUpdate): void {
    for (const item of update.final) {
      if (!isMark(item)) this.onFinalWord(item);
      else if (item.mark === 'endpoint') this.onEndpoint();
      else this.onFinalized();
    }
    for (const word of update.partial) this.onPartialWord(word);
  }

  /** The live session finished (the server is stopping): complete what was committed, and a turn in progress. */
  finished(): void {
    for (const c of this.awaiting.splice(0)) this.complete(c.item, c.endMs);
    if (this.vad && this.current.text !== '') {
      const item = this.current;
      const endMs = this.host.appendedMs();
      this.commit(endMs);
      this.complete(item, endMs);
    }
  }

  /** Commit the open item at `endMs`: committed, then the words it already has as deltas. */
  private commit(endMs: number): Item {
    const item = this.current;
    this.host.emit({ type: 'input_audio_buffer.committed', item_id: item.id, previous_item_id: this.lastItemId });
    this.lastItemId = item.id;
    this.current = this.newItem(endMs);
    for (const piece of item.unsent.splice(0)) this.emitDelta(item, piece);
    return item;
  }

  private complete(item: Item, endMs: number): void {
    this.host.emit({
      type: 'conversation.item.input_audio_transcription.completed',
      item_id: item.id,
      content_index: 0,
      transcript: item.text,
      usage: { type: 'duration', seconds: Math.max(0, Math.round(endMs - item.startMs)) / 1000 },
      ...(this.host.settings().logprobs ? { logprobs: item.logprobs } : {}),
    });
  }

  private get vad(): boolean {
    return this.host.settings().turnDetection !== null;
  }

  private onPartialWord(t: TranscriptWord): void {
    const start = t.start_ms ?? 0;
    if (this.vad && start >= this.clearedUntilMs && start >= this.current.startMs) this.speechStarted(this.current, start);
  }

  private onFinalWord(t: TranscriptWord): void {
    const start = t.start_ms ?? 0;
    const committed = this.awaiting.find((c) => c.item.startMs <= start && start < c.endMs);
    if (committed) {
      const piece = this.addWord(committed.item, t);
      if (piece) this.emitDelta(committed.item, piece);
      return;
    }
    if (start < this.clearedUntilMs) return;
    if (this.vad) this.speechStarted(this.current, start);
    const piece = this.addWord(this.current, t);
    if (piece) this.current.unsent.push(piece);
  }

  /** Add a final word to an item's transcript; what it adds (the item's first word without its leading space). */
  private addWord(item: Item, t: TranscriptWord): Piece | undefined {
    const text = item.text === '' ? t.text.trimStart() : t.text;
    if (t.end_ms !== undefined) item.lastEndMs = t.end_ms;
    if (!text) return undefined;
    item.text += text;
    if (!this.host.settings().logprobs) return { text };
    // The engine's confidence as a probability: what clients of logprobs read (exp(logprob)).
    const logprob = { token: text, logprob: Math.log(Math.max(t.confidence, 1e-6)), bytes: [...Buffer.from(text)] };
    item.logprobs.push(logprob);
    return { text, logprob };
  }

  private speechStarted(item: Item, startMs: number): void {
    if (item.speechStartMs !== undefined) return;
    const turnDetection = this.host.settings().turnDetection;
    const padding = turnDetection?.type === 'server_vad' ? (turnDetection.prefix_padding_ms ?? 0) : 0;
    item.speechStartMs = Math.max(item.startMs, startMs - padding);
    this.host.emit({ type: 'input_audio_buffer.speech_started', audio_start_ms: Math.round(item.speechStartMs), item_id: item.id });
  }

  /** An engine endpoint: with turn detection, the open turn is over. */
  private onEndpoint(): void {
    const item = this.current;
    if (!this.vad || (item.speechStartMs === undefined && item.text === '')) return;
    const endMs = Math.min(this.host.appendedMs(), Math.max(item.lastEndMs ?? item.startMs, item.startMs));
    this.host.emit({ type: 'input_audio_buffer.speech_stopped', audio_end_ms: Math.round(endMs), item_id: item.id });
    this.commit(endMs);
    this.complete(item, endMs);
  }

  /** A finalized mark: the oldest manual commit has all its words. */
  private onFinalized(): void {
    const c = this.awaiting.shift();
    if (c) this.complete(c.item, c.endMs);
  }

  private newItem(startMs: number): Item {
    return { id: newId('item'), startMs, text: '', unsent: [], logprobs: [] };
  }

  private emitDelta(item: Item, piece: Piece): void {
    this.host.emit({
      type: 'conversation.item.input_audio_transcription.delta',
      item_id: item.id,
      content_index: 0,
      delta: piece.text,
      ...(piece.logprob ? { logprobs: [piece.logprob] } : {}),
    });
  }
}
