// Run as a child process before a speaker-embedding model is loaded into the server: sherpa-onnx ends the whole
// process (a segmentation fault without a known `framework`, exit 255 without another metadata key) on a model it
// cannot use, so it is first loaded and tried here. Usage: node check-model.js '<extractor config JSON>'.
// Prints "ok <dim>" when usable.
import { sherpa } from '../stt/sherpa/load-sherpa.js';
import { embedSamples } from './embed.js';

const extractor = new (sherpa().SpeakerEmbeddingExtractor)(JSON.parse(process.argv[2] ?? '{}'));
const embedding = embedSamples(extractor, new Int16Array(16_000));
if (embedding.length !== extractor.dim) throw new Error(`the model made an embedding of ${embedding.length} values, its output_dim says ${extractor.dim}`);
process.stdout.write(`ok ${extractor.dim}\n`);
