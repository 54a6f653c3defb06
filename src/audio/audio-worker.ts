// Worker-thread entry for per-sample audio work that must stay off the event loop: voice profiles (seconds of DSP
// for a long clip), and the silence trimming, resampling and sample conversion of speech output.
import { parentPort } from 'node:worker_threads';
import type { AudioReply, AudioRequest, AudioResult } from './audio-worker-messages.js';
import { pcmToFloat, voiceProfile } from './features.js';
import { RawOutputEncoder, silenceBounds } from './raw-output.js';

const encoders = new Map<number, RawOutputEncoder>();

function handle(req: AudioRequest): AudioResult {
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
  }
}

parentPort!.on('message', (req: AudioRequest) => {
  let reply: AudioReply;
  try {
    reply = { id: req.id, result: handle(req) };
  } catch (err) {
    reply = { id: req.id, error: err instanceof Error ? err.message : String(err) };
  }
  // Copied, not transferred: small Buffers share Node's allocation pool, which a transfer would detach.
  parentPort!.postMessage(reply);
});
