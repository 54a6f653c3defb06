// The Soniox real-time protocol (/transcribe-websocket) as a renderer over a live session (session.ts): client
// messages parsed once (parseSttClientMessage, src/wire/stt-frames.ts) into the session's inputs, its events written
// as result frames. Transport-free: the ws adapter is routes.ts.
//
// - The first message is the configuration. Its `api_key` wins; when absent, the key offered at the handshake
//   (Authorization header or the soniox-api-key subprotocol) is used; a null one is refused as not a string.
// - Endpoint and finalized marks become the `<end>` and `<fin>` final tokens the SDKs turn into events.
// - The connection closes normally (1000) after the frame with `finished: true` or an error frame
//   (docs/wire-compat.md, "Real-time STT WebSocket").
import { parseSttClientMessage, type SttResultFrame, type SttServerFrame, sttErrorFrame, type SttToken } from '../../wire/stt-frames.js';
import { checkRealtimeConfig } from './config.js';
import { isMark, type FinalItem, type TranscriptUpdate, type TranscriptWord } from './live-events.js';
import type { RealtimeService, RealtimeSession } from './service.js';

export const END_TOKEN = '<end>';
export const FIN_TOKEN = '<fin>';

export interface SonioxSocketIO {
  send(frame: SttServerFrame): void;
  /** Close the connection normally (1000) after the frames sent so far. */
  close(): void;
}

const finalToken = (item: FinalItem): SttToken =>
  isMark(item)
    ? {
        text: item.mark === 'endpoint' ? END_TOKEN : FIN_TOKEN,
        confidence: 1,
        is_final: true,
        ...('channel' in item && item.channel !== undefined ? { channel: item.channel } : {}),
      }
    : { ...item, is_final: true };

const partialToken = (word: TranscriptWord): SttToken => ({ ...word, is_final: false });

/** A transcript update as a result frame: the new final tokens, then the current non-final ones. */
export function sonioxFrame(update: TranscriptUpdate): SttResultFrame {
  return {
    tokens: [...update.final.map(finalToken), ...update.partial.map(partialToken)],
    final_audio_proc_ms: update.finalAudioMs,
    total_audio_proc_ms: update.totalAudioMs,
  };
}

export class SonioxSocket {
  readonly session: RealtimeSession;

  constructor(
    service: RealtimeService,
    private readonly io: SonioxSocketIO,
    private readonly requestId: string,
    private readonly handshakeKey: string | undefined,
  ) {
    const referenceUrl = () => service.deps.errorReferenceUrl();
    this.session = service.open(
      {
        update: (update) => io.send(sonioxFrame(update)),
        finished: (update) => {
          io.send({ ...sonioxFrame(update), finished: true });
          io.close();
        },
        error: (err) => {
          io.send(sttErrorFrame(err, this.requestId, referenceUrl()));
          io.close();
        },
      },
      requestId,
    );
  }

  get backlogBytes(): number {
    return this.session.backlogBytes;
  }

  get closed(): boolean {
    return this.session.closed;
  }

  /** A text message from the client. */
  text(text: string): void {
    this.message(text);
  }

  /** A binary message from the client. */
  binary(data: Uint8Array): void {
    this.message(data);
  }

  /** The client went away. */
  gone(): void {
    this.session.gone();
  }

  fail(err: unknown): void {
    this.session.fail(err);
  }

  private message(data: string | Uint8Array): void {
    const session = this.session;
    if (!session.accepting) return;
    if (!session.started) {
      const parsed = parseSttClientMessage(data, 'config');
      if (!parsed.ok) return session.fail(parsed.error);
      const { api_key: key, body } = parsed.message;
      return session.start({ apiKey: key === undefined ? this.handshakeKey : key, config: checkRealtimeConfig(body) });
    }
    const parsed = parseSttClientMessage(data, 'stream');
    if (!parsed.ok) return session.fail(parsed.error);
    const msg = parsed.message;
    if (msg.type === 'audio') session.audio(msg.data);
    else if (msg.type === 'finalize') session.finalize();
    else if (msg.type === 'keepalive') session.keepalive();
    else session.end();
  }
}
