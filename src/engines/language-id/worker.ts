// Worker-thread entry of one language identifier (sherpa-onnx Whisper): the encoder and the decoder's first step run
// synchronously here, at batch priority, never on the event loop.
import { serveLane } from '../../lib/worker-lane.js';
import { sherpa } from '../stt/sherpa/load-sherpa.js';
import { identifySamples, type LanguageIdModel } from './identify.js';
import type { LanguageIdReply, LanguageIdRequest } from './worker-messages.js';

let lid: LanguageIdModel | undefined;

serveLane<LanguageIdRequest, LanguageIdReply>((req) => {
  switch (req.op) {
    case 'load':
      lid = new (sherpa().SpokenLanguageIdentification)(req.config);
      return { ok: true };
    case 'identify':
      lid ??= new (sherpa().SpokenLanguageIdentification)(req.config);
      return { language: identifySamples(lid, req.samples) };
  }
});
