// Run as a child process before a model is loaded into the server: sherpa-onnx ends the whole process (exit 255, or
// a segmentation fault) on a model file it cannot use, so a model is first loaded and tried here, where that only
// ends this child. Usage: node check-model.js offline|online|language-id '<config JSON>'. Prints "ok" when usable.
import { identifySamples } from '../../language-id/identify.js';
import { decodeSegment, pcmToFloat32, sherpa } from './load-sherpa.js';

const [kind, json] = process.argv.slice(2);
const config = JSON.parse(json ?? '{}');
const silence = new Int16Array(16_000);
if (kind === 'online') {
  const recognizer = new (sherpa().OnlineRecognizer)(config);
  const stream = recognizer.createStream();
  stream.acceptWaveform({ samples: pcmToFloat32(silence), sampleRate: 16_000 });
  stream.inputFinished();
  while (recognizer.isReady(stream)) recognizer.decode(stream);
  recognizer.getResult(stream);
} else if (kind === 'language-id') {
  identifySamples(new (sherpa().SpokenLanguageIdentification)(config), silence);
} else {
  decodeSegment(new (sherpa().OfflineRecognizer)(config), silence);
}
process.stdout.write('ok\n');
