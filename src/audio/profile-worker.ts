// Worker-thread entry: voiceProfile is seconds of synchronous DSP for a long clip; run off the event loop.
import { parentPort } from 'node:worker_threads';
import { pcmToFloat, voiceProfile } from './features.js';

parentPort!.on('message', (msg: { id: number; pcm: Uint8Array }) => {
  try {
    const pcm = Buffer.from(msg.pcm.buffer, msg.pcm.byteOffset, msg.pcm.byteLength);
    parentPort!.postMessage({ id: msg.id, profile: voiceProfile(pcmToFloat(pcm)) });
  } catch (err) {
    parentPort!.postMessage({ id: msg.id, error: err instanceof Error ? err.message : String(err) });
  }
});
