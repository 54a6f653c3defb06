// Engine-only references for the live suite (not the product's figures): each clip decoded alone in this process,
// as the issue defines them. The earliest this model can emit text: the clip in 20 ms pieces, how soon after its
// speech starts the model names something (a streaming zipformer works on whole chunks of its encoder, so about
// 0.5–0.8 s). The whole-clip decode: the same stream run to the clip's end and flushed as the server flushes an
// utterance (640 ms of silence, input finished), with the server's decoding settings; the live and async WER are
// held against its WER.
import sherpa from 'sherpa-onnx-node';
import { readManifest } from '../src/engines/model-dir/manifest.js';
import { onlineRecognizerConfig } from '../src/engines/stt/sherpa/online-config.js';
import { pcmToFloat32 } from '../src/engines/stt/sherpa/load-sherpa.js';
import type { Conversation } from './live-conversation.js';
import { BYTES_PER_MS, CHUNK_MS } from './realtime-stream.js';

/** The silence that flushes an utterance in the server (online-sessions.ts). */
const FLUSH = new Float32Array((16_000 * 640) / 1000);

export interface ClipAlone {
  /** Ms of audio after its speech starts at which the model first has text (null: never). */
  firstTextMs: number | null;
  /** The clip's words, decoded whole. */
  text: string;
}

/** Per turn of the conversation: the clip decoded alone by the model in `modelDir`. */
export function clipsAlone(modelDir: string, conversation: Conversation): ClipAlone[] {
  const recognizer = new sherpa.OnlineRecognizer(onlineRecognizerConfig(readManifest(modelDir)));
  return conversation.turns.map((t) => {
    const pcm = conversation.pcm.subarray(t.startMs * BYTES_PER_MS, t.endMs * BYTES_PER_MS);
    const samples = pcmToFloat32(new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.length)));
    const stream = recognizer.createStream();
    const piece = CHUNK_MS * 16;
    let firstTextMs: number | null = null;
    for (let off = 0; off < samples.length; off += piece) {
      stream.acceptWaveform({ samples: samples.subarray(off, off + piece), sampleRate: 16_000 });
      while (recognizer.isReady(stream)) recognizer.decode(stream);
      if (firstTextMs === null && recognizer.getResult(stream).text.trim()) {
        firstTextMs = Math.min(samples.length, off + piece) / 16 - (t.speechStartMs - t.startMs);
      }
    }
    stream.acceptWaveform({ samples: FLUSH, sampleRate: 16_000 });
    stream.inputFinished();
    while (recognizer.isReady(stream)) recognizer.decode(stream);
    return { firstTextMs, text: recognizer.getResult(stream).text.trim().toLowerCase() };
  });
}
