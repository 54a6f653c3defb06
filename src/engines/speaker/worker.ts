// Worker-thread entry of one speaker-embedding extractor (sherpa-onnx): embeddings and the clustering of a file's
// embeddings are computed synchronously here, at batch priority, never on the event loop.
import { serveLane } from '../../lib/worker-lane.js';
import { sherpa } from '../stt/sherpa/load-sherpa.js';
import { clusterEmbeddings } from './cluster.js';
import { embedSamples, type SpeakerEmbeddingExtractor } from './embed.js';
import type { SpeakerReply, SpeakerRequest } from './worker-messages.js';

let extractor: SpeakerEmbeddingExtractor | undefined;

serveLane<SpeakerRequest, SpeakerReply>((req) => {
  switch (req.op) {
    case 'load':
      extractor = new (sherpa().SpeakerEmbeddingExtractor)(req.config);
      return { dim: extractor.dim };
    case 'embed':
      extractor ??= new (sherpa().SpeakerEmbeddingExtractor)(req.config);
      return { embedding: embedSamples(extractor, req.samples) };
    case 'cluster':
      return { labels: clusterEmbeddings(req.embeddings, req.options, req.weights) };
  }
});
