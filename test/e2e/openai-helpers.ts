// Shared by the OpenAI-compatible surface's and the transcript exports' test files.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildConversation, wavBytes } from '../diarization-corpus.js';

/** A WAV of flite's kal and slt voices taking four turns, with pauses a diarizer can split at. */
export function twoSpeakerWav(dir: string): string {
  const sentences = ['The birch canoe slid on the smooth planks.', 'Glue the sheet to the dark blue background.', 'Rice is often served in round bowls.'];
  const voice = (v: string) => ({
    name: v,
    source: 'flite',
    clips: sentences.map((text, i) => {
      const clip = path.join(dir, `${v}-${i}.wav`);
      execFileSync('flite', ['-voice', v, '-t', text, '-o', clip]);
      return clip;
    }),
  });
  const file = path.join(dir, 'two-speakers.wav');
  writeFileSync(file, wavBytes(buildConversation([voice('kal'), voice('slt')], { turns: 4, seed: 4, pauseMs: [900, 1200] }).pcm));
  return file;
}
