// Festival (Debian `festival` + `festvox-kallpc16k`) through `text2wave`: text on stdin, WAV on stdout.
// Speed through Duration_Stretch (pitch kept). Festival starts slowly (~0.3 s a segment).
import type { EngineVoice, SynthesisChunk, SynthesisOptions, TtsEngine } from './interface.js';
import { commandExists, OUT_FILE, runWavProcess } from './process.js';
import { segments } from './text.js';

export class FestivalEngine implements TtsEngine {
  readonly name = 'festival';
  readonly supportsSpeed = true;
  readonly supportsTimestamps = true;
  readonly languages = [{ code: 'en', name: 'English' }];
  readonly voices: EngineVoice[] = [{ id: 'kal_diphone', gender: 'male', sampleRate: 16000 }];

  constructor(private readonly bin = 'text2wave') {}

  async available(): Promise<boolean> {
    return (await commandExists(this.bin, ['-h'])) && (await commandExists('festival', ['--version']));
  }

  async *synthesize(text: AsyncIterable<string> | string, voice: string, _language: string, opts: SynthesisOptions = {}): AsyncGenerator<SynthesisChunk> {
    if (!/^[a-z0-9_]+$/.test(voice)) throw new Error(`bad festival voice ${voice}`);
    const stretch = (1 / (opts.speed ?? 1)).toFixed(3);
    for await (const seg of segments(text)) {
      const args = ['-o', OUT_FILE, '-eval', `(voice_${voice})`, '-eval', `(Parameter.set 'Duration_Stretch ${stretch})`];
      const { pcm, sampleRate } = await runWavProcess(this.bin, args, { stdin: seg, signal: opts.signal });
      yield { pcm, sampleRate, text: seg };
    }
  }
}
