// PCM → the frames diarization clusters: 12 MFCCs (c1..c12; c0 is loudness, which says more about the microphone
// than the speaker) and the pitch (voiced frames) every 10 ms, kept only where the voice activity detector hears speech. One extractor per audio
// stream; it holds at most a frame of audio and the VAD decisions not yet matched with a spectral frame.
import { S16leReader } from '../../audio/s16le.js';
import { FEATURE_FRAME_SAMPLES, FEATURE_HOP_SAMPLES, SpectralFrameStream } from '../../audio/features.js';
import { VAD_FRAME_SAMPLES, type VadStream } from '../../audio/vad.js';

export const SPEAKER_FEATURE_DIM = 12;
/** Milliseconds per frame hop. */
export const FRAME_MS = (FEATURE_HOP_SAMPLES / 16_000) * 1000;

export interface SpeakerFrame {
  /** Frame number on the 10 ms grid: the frame starts at index * 10 ms. */
  index: number;
  features: Float32Array;
  /** Pitch in semitones above 100 Hz, or undefined for an unvoiced frame. */
  pitch?: number;
}

export class SpeakerFrameExtractor {
  private readonly spectral = new SpectralFrameStream();
  private readonly reader = new S16leReader();
  /** Spectral frames waiting for the VAD decision that covers their centre. */
  private waiting: SpeakerFrame[] = [];
  /** VAD decisions from VAD frame `vadBase` on. */
  private speech: boolean[] = [];
  private vadBase = 0;
  /** Index of the next spectral frame to come. */
  private nextFrame = 0;

  constructor(private readonly vad: VadStream) {}

  /** Feed s16le PCM; returns the speech frames that became known, in order. */
  async push(pcm: Uint8Array): Promise<SpeakerFrame[]> {
    for (const f of await this.vad.push(pcm)) this.speech.push(f.speech);
    // Integer sample scale, not [-1, 1]: Meyda's mel bands are log(1 + energy), which is only a log (level-independent
    // up to c0) when the energies are large; at unit scale quiet bands come out linear and the MFCCs track loudness.
    const frames = this.spectral.push(Float32Array.from(this.reader.read(pcm)), true);
    frames.mfcc.forEach((m, i) => {
      const hz = frames.pitchHz![i]!;
      this.waiting.push({ index: frames.first + i, features: m.subarray(1, 1 + SPEAKER_FEATURE_DIM), pitch: hz > 0 ? 12 * Math.log2(hz / 100) : undefined });
    });
    this.nextFrame = frames.first + frames.mfcc.length;
    return this.release(false);
  }

  /** End of stream: the last VAD frame is decided and every waiting frame released. */
  async flush(): Promise<SpeakerFrame[]> {
    for (const f of await this.vad.flush()) this.speech.push(f.speech);
    return this.release(true);
  }

  private release(all: boolean): SpeakerFrame[] {
    const out: SpeakerFrame[] = [];
    let used = 0;
    for (const f of this.waiting) {
      const centre = f.index * FEATURE_HOP_SAMPLES + FEATURE_FRAME_SAMPLES / 2;
      const k = Math.floor(centre / VAD_FRAME_SAMPLES) - this.vadBase;
      if (k >= this.speech.length && !all) break;
      used++;
      if (this.speech[k]) out.push(f);
    }
    this.waiting = this.waiting.slice(used);
    // Drop decisions no waiting frame can need any more.
    const nextIndex = this.waiting[0]?.index ?? this.nextFrame;
    const keepFrom = Math.min(this.speech.length, Math.floor((nextIndex * FEATURE_HOP_SAMPLES + FEATURE_FRAME_SAMPLES / 2) / VAD_FRAME_SAMPLES) - this.vadBase);
    if (keepFrom > 0) {
      this.speech = this.speech.slice(keepFrom);
      this.vadBase += keepFrom;
    }
    return out;
  }
}
