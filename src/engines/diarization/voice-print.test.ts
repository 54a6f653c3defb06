// Voice prints of real recordings (Debian's Asterisk prompts and LibriVox reader, test/diarization-corpus.ts): prints
// survive JSON, one voice is closer to itself on other clips than to another voice, heard voices are matched to
// enrolled ones one-to-one, and a voice that was never enrolled stays unknown; per turn, a diarized speaker that merged
// two voices is split by its turns, and two enrolled voices too alike for a turn leave it unknown.
import { beforeAll, describe, expect, it } from 'vitest';
import { loadVad, type Vad } from '../../audio/vad.js';
import { type CorpusSpeaker, decodeFile, realSpeakers } from '../../../test/diarization-corpus.js';
import { BicDiarizer } from './index.js';
import type { VoicePrint } from './interface.js';
import {
  DEFAULT_TURN_RULE,
  identifySpeakers,
  identifyTurn,
  identifyTurns,
  MIN_HEARD_SPEECH_MS,
  mergePrints,
  printOfStats,
  statsOfPrint,
  voiceDistance,
} from './voice-print.js';

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

describe('identifyTurns', () => {
  const t = { maxDistance: 0.4, minSimilarity: 0.5, minSpeechMs: MIN_HEARD_SPEECH_MS };

  it('splits a diarized speaker that merged two voices: each long turn is judged alone, short turns follow their speaker', async () => {
    const enrolled = await Promise.all(['allison', 'june'].map((n) => printOf(enrolClips(n, 8))));
    // One diarized speaker (0) holding allison, june and the Russian voice (not enrolled), two clips each.
    const clips = [0, 1].flatMap((k) => ['allison', 'june', 'ivrvoice-ru'].map((n) => ({ n, clip: speakers.get(n)!.clips[k]! })));
    const prints = new Map<number, VoicePrint>();
    for (const [i, c] of clips.entries()) prints.set(i, (await diarizer.measure(bytes(decodeFile(c.clip)))).get(0)!);
    const turns = clips.map((_, i) => ({ startMs: i * 5000, endMs: i * 5000 + 4000, speaker: 0 }));
    const found = identifyTurns(turns, prints, enrolled, t);
    const nameOf = (i: number) => found.names.get(found.turns[i]!.speaker);
    const judged = clips.map((c, i) => [c.n, prints.get(i)!.speechMs >= 1000 ? nameOf(i) : 'short']);
    // Every judged turn of the enrolled voices takes its own name or none, never the other's; the Russian voice none.
    for (const [n, got] of judged) {
      if (got === 'short') continue;
      if (n === 'ivrvoice-ru') expect(got, JSON.stringify(judged)).toBeUndefined();
      else expect([undefined, n === 'allison' ? 0 : 1], JSON.stringify(judged)).toContain(got);
    }
    expect(judged.filter(([n, got]) => n !== 'ivrvoice-ru' && got !== undefined && got !== 'short').length, JSON.stringify(judged)).toBeGreaterThanOrEqual(2);
    // A short turn of a speaker whose judged turns are all one name takes that name.
    const one = identifyTurns(
      [
        { startMs: 0, endMs: 4000, speaker: 3 },
        { startMs: 5000, endMs: 5500, speaker: 3 },
      ],
      new Map([
        [0, prints.get(0)!],
        [1, { ...prints.get(0)!, speechMs: 500 }],
      ]),
      enrolled,
      t,
    );
    expect(one.turns[0]!.speaker).toBe(one.turns[1]!.speaker);
  }, 180_000);

  it('leaves a turn unknown when the two closest enrolled voices are within the margin', async () => {
    const allison = await printOf(enrolClips('allison', 8));
    const heard = await printOf(speakers.get('allison')!.clips.slice(0, 2));
    expect(identifyTurn(heard, [allison], t)).toBe(0);
    // The same profile twice: no margin at all.
    expect(identifyTurn(heard, [allison, allison], t)).toBeUndefined();
    expect(identifyTurn(heard, [allison, allison], t, { ...DEFAULT_TURN_RULE, margin: 1 })).toBe(0);
  }, 60_000);
});
