// One sentence through a sherpa-onnx OfflineTts, as s16le samples: shared by the worker thread (tts-worker.ts), the
// model check in a child process (check-model.ts) and the in-process path of the engine (sources only).
import type sherpaTypes from 'sherpa-onnx-node';

export type OfflineTts = sherpaTypes.OfflineTts;

export interface SentenceRequest {
  text: string;
  /** Speaker id. */
  sid: number;
  /** 1 = the model's pace; sherpa divides the model's length scale by it. */
  speed: number;
}

export interface SentenceAudio {
  samples: Int16Array;
  sampleRate: number;
}

/** sherpa-onnx's float samples in [-1, 1] as signed 16-bit (clipped). */
export function floatToPcm16(samples: Float32Array): Int16Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i]!;
    out[i] = s >= 1 ? 32767 : s <= -1 ? -32768 : Math.round(s * 32767);
  }
  return out;
}

/** Synthesize on the calling thread (blocks it). */
export function generateSentence(tts: OfflineTts, req: SentenceRequest): SentenceAudio {
  const audio = tts.generate({ text: req.text, sid: req.sid, speed: req.speed });
  return { samples: floatToPcm16(audio.samples), sampleRate: audio.sampleRate };
}
