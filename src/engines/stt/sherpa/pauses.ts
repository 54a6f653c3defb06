// The speaker's pauses in a live session of a streaming model, from the Silero VAD (src/audio/vad.ts) run beside
// the model on the same audio: an utterance ends once `endpointMs` of non-speech follow speech. The model's own
// trailing blanks are known only when the encoder has decoded a whole chunk past them (320 ms and its look-ahead for
// the 16-frame zipformers), the VAD's after each 32 ms frame. Words of sounds the VAD does not call speech (a model
// that transcribes tones, say) keep the model's own pause rule: `hearing` tells the two apart.
import { VAD_FRAME_SAMPLES, type VadStream } from '../../../audio/vad.js';

export class PauseDetector {
  /** Sample after the last speech frame. */
  private speechEnd = 0;
  /** Speech since the last utterance closed. */
  private spoke = false;

  constructor(
    private readonly vad: VadStream,
    /** Non-speech after speech that ends an utterance, samples. */
    private readonly endpointSamples: number,
  ) {}

  /** The session's next audio; true when an utterance ends in it (a pause long enough after speech). */
  async push(pcm: Uint8Array): Promise<boolean> {
    let ended = false;
    for (const f of await this.vad.push(pcm)) {
      if (f.speech) {
        this.spoke = true;
        this.speechEnd = f.start + VAD_FRAME_SAMPLES;
      } else if (this.spoke && f.start + VAD_FRAME_SAMPLES - this.speechEnd >= this.endpointSamples) {
        this.spoke = false;
        ended = true;
      }
    }
    return ended;
  }

  /** The VAD heard speech in the open utterance: its pause ends the utterance, not the model's blanks. */
  get hearing(): boolean {
    return this.spoke;
  }

  /** The utterance was closed otherwise (finalize, its longest length): the next pause needs new speech first. */
  closed(): void {
    this.spoke = false;
  }
}
