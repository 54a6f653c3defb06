// Worker-thread entry for per-sample audio work that must stay off the event loop: voice profiles (seconds of DSP
// for a long clip), the silence trimming, resampling and sample conversion of speech output, and voice activity
// detection (Silero's ONNX session runs synchronously on the calling thread).
import { serveLane } from '../lib/worker-lane.js';
import type { AudioRequest, AudioResult } from './audio-worker-messages.js';
import { pcmToFloat, voiceProfile } from './features.js';
import { RawOutputEncoder, silenceBounds } from './raw-output.js';
import { loadVad, type Vad, type VadStream } from './vad.js';

const encoders = new Map<number, RawOutputEncoder>();
const vads = new Map<string, Vad>();
const vadStreams = new Map<number, VadStream>();

async function handle(req: AudioRequest): Promise<AudioResult> {
  switch (req.op) {
    case 'profile':
      return { profile: voiceProfile(pcmToFloat(Buffer.from(req.pcm.buffer, req.pcm.byteOffset, req.pcm.byteLength))) };
    case 'silence-bounds':
      return { bounds: silenceBounds(req.pcm, req.rate) };
    case 'encoder-open':
      encoders.set(req.stream, new RawOutputEncoder(req.options));
      return { ok: true };
    case 'encoder-push': {
      const enc = encoders.get(req.stream);
      if (!enc) throw new Error(`no encoder ${req.stream}`);
      return { bytes: enc.push(req.pcm) };
    }
    case 'encoder-end': {
      const enc = encoders.get(req.stream);
      encoders.delete(req.stream);
      return { bytes: enc ? enc.end() : new Uint8Array(0) };
    }
    case 'vad-load': {
      const modelKey = `${req.backend ?? 'silero'}:${req.modelPath ?? ''}`;
      let warning: { msg: string; detail?: Record<string, unknown> } | undefined;
      let vad = vads.get(modelKey);
      if (!vad) {
        vad = await loadVad({ backend: req.backend, modelPath: req.modelPath, log: (_level, msg, detail) => (warning = { msg, detail }) });
        vads.set(modelKey, vad);
      }
      return { vad: { modelKey, backend: vad.backend, fallbackReason: vad.fallbackReason, warning } };
    }
    case 'vad-open': {
      const vad = vads.get(req.modelKey);
      if (!vad) throw new Error(`no voice activity detector ${req.modelKey}`);
      vadStreams.set(req.stream, vad.createStream(req.options));
      return { ok: true };
    }
    case 'vad-push': {
      const stream = vadStreams.get(req.stream);
      if (!stream) throw new Error(`no voice activity stream ${req.stream}`);
      return { frames: await stream.push(req.pcm) };
    }
    case 'vad-flush': {
      const stream = vadStreams.get(req.stream);
      vadStreams.delete(req.stream);
      return { frames: stream ? await stream.flush() : [] };
    }
    case 'vad-close':
      vadStreams.delete(req.stream);
      return { ok: true };
  }
}

serveLane(handle);
