// Voice prints of real recordings (Debian's Asterisk prompts and LibriVox reader, test/diarization-corpus.ts): prints
// survive JSON, one voice is closer to itself on other clips than to another voice, heard voices are matched to
// enrolled ones one-to-one, and a voice that was never enrolled stays unknown.
import { beforeAll, describe, expect, it } from 'vitest';
import { loadVad, type Vad } from '../../audio/vad.js';
import { type CorpusSpeaker, decodeFile, realSpeakers } from '../../../test/diarization-corpus.js';
import { BicDiarizer } from './index.js';
import { identifySpeakers, MIN_HEARD_SPEECH_MS, mergePrints, printOfStats, statsOfPrint, voiceDistance, type VoicePrint } from './voice-print.js';

let vad: Vad;
let diarizer: BicDiarizer;
let speakers: Map<string, CorpusSpeaker>;

const bytes = (pcm: Int16Array) => [Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength)];

/** One print of the given clips (each measured alone, then merged, as enrolment does). */
async function printOf(clips: string[]): Promise<VoicePrint> {
  const prints: VoicePrint[] = [];
  for (const c of clips) prints.push((await diarizer.measure(bytes(decodeFile(c)))).get(0)!);
  return mergePrints(prints);
}

beforeAll(async () => {
  vad = await loadVad({ log: () => {} });
  diarizer = new BicDiarizer({ vad });
  speakers = new Map(realSpeakers().map((s) => [s.name, s]));
}, 60_000);

/** Enrolment clips from the end of a speaker's list, test clips from the start: never the same clip. */
const enrolClips = (name: string, n: number) => speakers.get(name)!.clips.slice(-n);

describe('voice prints', () => {
  it('survive JSON: the statistics come back equal', async () => {
    const p = await printOf(enrolClips('allison', 2));
    const back = JSON.parse(JSON.stringify(p)) as VoicePrint;
    expect(printOfStats(statsOfPrint(back))).toEqual(p);
    expect(p.speechMs).toBeGreaterThan(1000);
  });

  it('a voice is closer to itself on other clips than to any other voice', async () => {
    const names = ['allison', 'june', 'ivrvoice-ru'];
    const enrolled = new Map<string, VoicePrint>();
    const heard = new Map<string, VoicePrint>();
    for (const n of names) {
      enrolled.set(n, await printOf(enrolClips(n, 4)));
      heard.set(n, await printOf(speakers.get(n)!.clips.slice(0, 4)));
    }
    for (const a of names) {
      const same = voiceDistance(statsOfPrint(heard.get(a)!), statsOfPrint(enrolled.get(a)!));
      for (const b of names.filter((n) => n !== a))
        expect(same, `${a} vs ${b}`).toBeLessThan(voiceDistance(statsOfPrint(heard.get(a)!), statsOfPrint(enrolled.get(b)!)));
    }
  }, 120_000);
});

describe('identifySpeakers', () => {
  it('names the enrolled voices, one-to-one, and leaves the voice not enrolled unknown', async () => {
    // Heard: other clips of three voices; enrolled: two of them and a distractor who is not heard.
    const heard = new Map<number, VoicePrint>();
    for (const [i, n] of ['allison', 'june', 'ivrvoice-ru'].entries()) heard.set(i, await printOf(speakers.get(n)!.clips.slice(0, 4)));
    const enrolled = await Promise.all(['allison', 'june', 'librivox'].map((n) => printOf(enrolClips(n, n === 'librivox' ? 2 : 4))));
    const found = identifySpeakers(heard, enrolled, { maxDistance: 0.5, minSimilarity: 0.5, minSpeechMs: MIN_HEARD_SPEECH_MS });
    expect([...found].sort()).toEqual([
      [0, 0],
      [1, 1],
    ]);
    // One-to-one: the same voice heard twice takes the name once.
    const twice = identifySpeakers(
      new Map([
        [0, heard.get(0)!],
        [1, heard.get(0)!],
      ]),
      enrolled,
      { maxDistance: 0.5, minSimilarity: 0.5, minSpeechMs: MIN_HEARD_SPEECH_MS },
    );
    expect(twice.size).toBe(1);
  }, 120_000);

  it('names nobody when no enrolled voice is close enough, and does not judge too little speech', async () => {
    const heard = new Map([[0, await printOf(speakers.get('june')!.clips.slice(0, 4))]]);
    const allison = await printOf(enrolClips('allison', 4));
    expect(identifySpeakers(heard, [allison], { maxDistance: 0.45, minSimilarity: 0.5, minSpeechMs: MIN_HEARD_SPEECH_MS }).size).toBe(0);
    // Too little speech is not judged at all, even at a threshold that accepts anything.
    const short = { ...heard.get(0)!, speechMs: MIN_HEARD_SPEECH_MS - 1 };
    expect(identifySpeakers(new Map([[0, short]]), [allison], { maxDistance: 1e9, minSimilarity: -1, minSpeechMs: MIN_HEARD_SPEECH_MS }).size).toBe(0);
    expect(
      identifySpeakers(new Map([[0, { ...short, speechMs: MIN_HEARD_SPEECH_MS }]]), [allison], {
        maxDistance: 1e9,
        minSimilarity: -1,
        minSpeechMs: MIN_HEARD_SPEECH_MS,
      }).size,
    ).toBe(1);
  }, 60_000);
});
