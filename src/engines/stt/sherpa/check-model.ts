// Run as a child process before a model is loaded into the server: sherpa-onnx ends the whole process (exit 255, or
// a segmentation fault) on a model file it cannot use, so a model is first loaded and tried here, where that only
// ends this child. Usage: node check-model.js '<OfflineRecognizerConfig JSON>'. Prints "ok" and exits 0 when usable.
import { decodeSegment, sherpa } from './load-sherpa.js';

const config = JSON.parse(process.argv[2] ?? '{}');
const recognizer = new (sherpa().OfflineRecognizer)(config);
decodeSegment(recognizer, new Int16Array(16_000));
process.stdout.write('ok\n');
