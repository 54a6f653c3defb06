// Voices a request names for itself: short reference clips sent with it (OpenAI's `known_speaker_references`), each
// measured into a voice print as an enrolment sample is (measure-clip.ts) and recognised the way enrolled speakers
// are, for that request only. A clip is written to a temporary file, checked (its size, decodable audio of the
// allowed length, enough speech), measured and removed at once: no clip and no print is kept by this module.
import { writeFile } from 'node:fs/promises';
import type { DiarizationEngine, VoicePrint } from '../../engines/diarization/interface.js';
import type { BlobStore } from '../../storage/blob-store.js';
import { invalidField } from '../../wire/api-error.js';
import { ClipRejected, measureClip } from './measure-clip.js';

export interface ReferenceLimits {
  /** Largest clip, bytes. */
  maxBytes: number;
  /** Shortest and longest clip, seconds of audio. */
  minSeconds: number;
  maxSeconds: number;
  /** Speech (voice activity) a clip must hold, ms. */
  minSpeechMs: number;
}

export class ReferenceClips {
  constructor(
    private readonly blobs: BlobStore,
    private readonly diarizer: DiarizationEngine,
    /** The enrolment sample size limit (PARLANCE_SPEAKER_MAX_FILE_SIZE_BYTES): no clip is larger. */
    private readonly maxSampleBytes: number,
  ) {}

  /**
   * The print of each clip, in order. A clip refused is invalid_request naming `<field>.<index>` and saying why; an
   * abort (the client left) stops the measuring.
   */
  async prints(clips: readonly Buffer[], field: string, limits: ReferenceLimits, signal: AbortSignal): Promise<VoicePrint[]> {
    const maxBytes = Math.min(limits.maxBytes, this.maxSampleBytes);
    clips.forEach((clip, i) => {
      if (clip.length > maxBytes) throw invalidField(`${field}.${i}`, `is larger than ${maxBytes} bytes of audio`, 'file_too_large');
    });
    const prints: VoicePrint[] = [];
    for (const [i, clip] of clips.entries()) prints.push(await this.measure(clip, `${field}.${i}`, limits, signal));
    return prints;
  }

  private async measure(clip: Buffer, location: string, limits: ReferenceLimits, signal: AbortSignal): Promise<VoicePrint> {
    const temp = this.blobs.tempPath();
    try {
      await writeFile(temp, clip, { flag: 'wx' });
      const { print, audioMs } = await measureClip(this.diarizer, temp, {
        maxSeconds: limits.maxSeconds,
        tooLong: `is longer than ${limits.maxSeconds} seconds`,
        signal,
      });
      if (audioMs < limits.minSeconds * 1000) throw new ClipRejected(`is ${(audioMs / 1000).toFixed(1)} s long; at least ${limits.minSeconds} s are needed`);
      if (print.speechMs < limits.minSpeechMs)
        throw new ClipRejected(
          `holds ${(print.speechMs / 1000).toFixed(1)} s of speech; at least ${(limits.minSpeechMs / 1000).toFixed(1)} s of the speaker's voice are needed`,
        );
      return print;
    } catch (err) {
      if (err instanceof ClipRejected) throw invalidField(location, err.why, 'invalid_value');
      throw err;
    } finally {
      await this.blobs.discardTemp(temp);
    }
  }
}
