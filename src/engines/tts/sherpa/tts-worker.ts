// Worker-thread entry of one TTS model (sherpa-onnx): sentences are synthesized synchronously here, below the
// server's priority (INTERACTIVE_NICE), so synthesis never holds the event loop or Node's shared thread pool.
import { serveLane } from '../../../lib/worker-lane.js';
import { sherpa } from '../../stt/sherpa/load-sherpa.js';
import { generateSentence, type OfflineTts } from './generate.js';
import type { TtsWorkerReply, TtsWorkerRequest } from './tts-worker-messages.js';

let tts: OfflineTts | undefined;

serveLane<TtsWorkerRequest, TtsWorkerReply>((req) => {
  switch (req.op) {
    case 'load':
      tts = new (sherpa().OfflineTts)(req.config);
      return { sampleRate: tts.sampleRate, numSpeakers: tts.numSpeakers };
    case 'generate':
      if (!tts) throw new Error('TTS model not loaded');
      return { audio: generateSentence(tts, req) };
  }
});
