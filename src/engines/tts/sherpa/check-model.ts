// Run as a child process before a TTS model is offered: sherpa-onnx ends the whole process (exit 255, or a
// segmentation fault) on a model file it cannot use, so a model is first loaded and made to speak one short sentence
// here, where that only ends this child. Usage: node check-model.js '<OfflineTtsConfig JSON>' '<text>'.
// Prints one JSON line {sampleRate, numSpeakers, samples} and exits 0 when usable.
import { sherpa } from '../../stt/sherpa/load-sherpa.js';
import { generateSentence } from './generate.js';

const config = JSON.parse(process.argv[2] ?? '{}');
const tts = new (sherpa().OfflineTts)(config);
const audio = generateSentence(tts, { text: process.argv[3] ?? 'Hello.', sid: 0, speed: 1 });
process.stdout.write(`${JSON.stringify({ sampleRate: tts.sampleRate, numSpeakers: tts.numSpeakers, samples: audio.samples.length })}\n`);
