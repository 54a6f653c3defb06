// flite (Debian `flite`): English voices kal (8 kHz), kal16, awb, awb_time, rms, slt (16 kHz). One process
// per segment; speed through `--setf duration_stretch=` (pitch kept).
import type { TtsEngineDescriptor } from './descriptor.js';
import type { EngineVoice, SynthesisChunk, SynthesisOptions, TtsEngine } from './interface.js';
import { commandExists, OUT_FILE, runWavProcess } from './process.js';
import { fliteWords } from './flite-words.js';
import { segments } from './text.js';
import { FLITE_CURATED } from './voice-table.js';
import { buildVoices } from './voices.js';

export class FliteEngine implements TtsEngine {
  readonly name = 'flite';
  readonly supportsSpeed = true;
  readonly supportsTimestamps = true;
  readonly languages = [{ code: 'en', name: 'English' }];
  readonly voices: EngineVoice[] = [
    { id: 'kal', gender: 'male', sampleRate: 8000 },
    { id: 'kal16', gender: 'male', sampleRate: 16000 },
    { id: 'awb', gender: 'male', sampleRate: 16000 },
    { id: 'awb_time', gender: 'male', sampleRate: 16000 },
    { id: 'rms', gender: 'male', sampleRate: 16000 },
    { id: 'slt', gender: 'female', sampleRate: 16000 },
  ];

  constructor(private readonly bin = 'flite') {}

  available(): Promise<boolean> {
    return commandExists(this.bin, ['-lv']);
  }

  async *synthesize(text: AsyncIterable<string> | string, voice: string, _language: string, opts: SynthesisOptions = {}): AsyncGenerator<SynthesisChunk> {
    const stretch = (1 / (opts.speed ?? 1)).toFixed(3);
    for await (const seg of segments(text)) {
      // -t takes the next argument as text verbatim, whatever it starts with.
      // -psdur: flite prints its phone segments' end times, which become word times (flite-words.ts).
      const args = ['-voice', voice, '--setf', `duration_stretch=${stretch}`, ...(opts.wordTimings ? ['-psdur'] : []), '-t', seg, '-o', OUT_FILE];
      const { pcm, sampleRate, stdout } = await runWavProcess(this.bin, args, { signal: opts.signal });
      const words = opts.wordTimings && stdout ? await fliteWords(seg, stdout.toString('utf8'), pcm.length / 2 / sampleRate) : undefined;
      yield { pcm, sampleRate, text: seg, ...(words ? { words } : {}) };
    }
  }
}

/** flite's English model, with the curated voices. */
export const fliteTtsEngine: TtsEngineDescriptor = {
  family: 'tts',
  id: 'flite',
  models: ['parlance-tts-flite-v1'],
  async build({ wanted }) {
    const flite = new FliteEngine();
    if (!wanted('parlance-tts-flite-v1') || !(await flite.available())) return [];
    const voices = buildVoices(flite, FLITE_CURATED, false);
    return [{ id: 'parlance-tts-flite-v1', name: 'Parlance TTS v1 (flite, English)', engine: flite, voices, supportsSilenceReduction: true }];
  },
};
