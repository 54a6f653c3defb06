// Engine-only reference for the live suite's first-token figure (not the product's): how soon the model itself names
// something of each clip, decoding the clip alone in 20 ms pieces in this process, as the issue defines "the earliest
// this model can emit one" (a streaming zipformer works on whole chunks of its encoder, so about 0.5–0.8 s).
import sherpa from 'sherpa-onnx-node';
import { readManifest } from '../src/engines/model-dir/manifest.js';
import { onlineRecognizerConfig } from '../src/engines/stt/sherpa/online-config.js';
import { pcmToFloat32 } from '../src/engines/stt/sherpa/load-sherpa.js';
import type { Conversation } from './live-conversation.js';
import { BYTES_PER_MS, CHUNK_MS } from './realtime-stream.js';

/** Per turn: ms of audio after its speech starts at which the model, given the clip alone, first has text (null: never). */
export function earliestFirstText(modelDir: string, conversation: Conversation): (number | null)[] {
  const recognizer = new sherpa.OnlineRecognizer(onlineRecognizerConfig(readManifest(modelDir)));
  return conversation.turns.map((t) => {
    const pcm = conversation.pcm.subarray(t.startMs * BYTES_PER_MS, t.endMs * BYTES_PER_MS);
    const samples = pcmToFloat32(new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.length)));
    const stream = recognizer.createStream();
    const piece = CHUNK_MS * 16;
    for (let off = 0; off < samples.length; off += piece) {
      stream.acceptWaveform({ samples: samples.subarray(off, off + piece), sampleRate: 16_000 });
      while (recognizer.isReady(stream)) recognizer.decode(stream);
      if (recognizer.getResult(stream).text.trim()) return Math.min(samples.length, off + piece) / 16 - (t.speechStartMs - t.startMs);
    }
    return null;
  });
}
