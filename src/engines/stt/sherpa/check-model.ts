// Run as a child process before a model is loaded into the server: sherpa-onnx ends the whole process (exit 255, or
// a segmentation fault) on a model file it cannot use, so a model is first loaded and tried here, where that only
// ends this child. Usage: node check-model.js offline|online|language-id '<config JSON>'. Prints "ok" when usable;
// for a streaming model then "batch" when its encoder decodes several streams in one call (a model exported with a
// batch dimension of 1 aborts there, after the "ok").
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
  process.stdout.write('ok\n'); // synchronous on a pipe: the parent has it even if the batch below aborts
  const streams = [recognizer.createStream(), recognizer.createStream()];
  for (const s of streams) s.acceptWaveform({ samples: pcmToFloat32(silence), sampleRate: 16_000 });
  recognizer.decodeStreams(streams);
  process.stdout.write('batch\n');
} else if (kind === 'language-id') {
  identifySamples(new (sherpa().SpokenLanguageIdentification)(config), silence);
} else {
  decodeSegment(new (sherpa().OfflineRecognizer)(config), silence);
}
if (kind !== 'online') process.stdout.write('ok\n');
