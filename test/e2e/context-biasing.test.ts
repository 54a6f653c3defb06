// `context` end to end (issue 14): words the model's dictionary lacks, named in `context.terms`, are recognised in
// async transcripts and real-time final tokens, written as given; the same audio without context never has them;
// context text counts too. Real recordings: Asterisk prompts read by Allison Smith (asterisk-core-sounds-en-wav).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startParlance, streamRealtime, transcribeFile, type Parlance } from '../harness.js';
import { ASTERISK_EN } from '../real-speech.js';

const UNMUTED = `${ASTERISK_EN}/conf-unmuted.wav`; // "You are now unmuted."
const CONGRATS = `${ASTERISK_EN}/demo-congrats.wav`; // "... Asterisk PBX ... Digium ..."
let s: Parlance;

beforeAll(async () => {
  s = await startParlance();
});
afterAll(() => s?.stop());

/** Five transcriptions of up to 30 s run at once: on a busy 2-core machine they take minutes, not seconds. */
async function transcribe(file: string, extra: Record<string, unknown> = {}): Promise<string> {
  return (await transcribeFile(s, file, extra, 420_000)).text;
}

describe.skipIf(!existsSync(UNMUTED))('context biasing', () => {
  it('async: terms the dictionary lacks are recognised and written as given, only with context', async () => {
    const [plain, terms, asText, plainCongrats, congrats] = await Promise.all([
      transcribe(UNMUTED),
      transcribe(UNMUTED, { context: { terms: ['unmuted', 'Kubernetes'] } }),
      transcribe(UNMUTED, { context: 'Conference bridge prompts: you are now unmuted.' }),
      transcribe(CONGRATS),
      transcribe(CONGRATS, { context: { general: [{ key: 'domain', value: 'telephony' }], terms: ['PBX', 'Digium'] } }),
    ]);
    expect(plain).not.toMatch(/unmuted/i);
    expect(terms).toMatch(/\bunmuted\b/);
    expect(terms).not.toMatch(/kubernetes/i);
    expect(asText).toMatch(/\bunmuted\b/i);
    expect(plainCongrats).not.toMatch(/pbx/i);
    expect(congrats).toMatch(/\bPBX\b/);
  }, 480_000);

  it('real time: final tokens with the session context; another session on the server is unaffected', async () => {
    const pcm = execFileSync('ffmpeg', ['-v', 'error', '-i', UNMUTED, '-f', 's16le', '-ac', '1', '-ar', '16000', '-']);
    const live = async (extra: Record<string, unknown>) => {
      const frames = await streamRealtime(s, Buffer.concat([pcm, Buffer.alloc(32_000)]), extra);
      expect(frames.find((f) => f.error_type)).toBeUndefined();
      return frames
        .flatMap((f) => f.tokens.filter((t) => t.is_final && !t.text.startsWith('<')))
        .map((t) => t.text)
        .join('');
    };
    const [biased, plain] = await Promise.all([live({ context: { terms: ['unmuted'] } }), live({})]);
    expect(biased).toMatch(/\bunmuted\b/i);
    expect(plain).not.toMatch(/unmuted/i);
  }, 180_000);
});
