// Worker-thread entry of one offline recognizer (sherpa-onnx): segments are decoded synchronously here, at batch
// priority, so a long decode never holds the event loop or Node's shared thread pool (which file I/O needs).
import { serveLane } from '../../../lib/worker-lane.js';
import { decodeSegment, type OfflineRecognizer, sherpa } from './load-sherpa.js';
import type { OfflineReply, OfflineRequest } from './offline-worker-messages.js';

let recognizer: OfflineRecognizer | undefined;

serveLane<OfflineRequest, OfflineReply>((req) => {
  switch (req.op) {
    case 'load':
      recognizer = new (sherpa().OfflineRecognizer)(req.config);
      return { ok: true };
    case 'decode':
      if (!recognizer) throw new Error('recognizer not loaded');
      return { result: decodeSegment(recognizer, req.samples, req.hotwords) };
  }
});
