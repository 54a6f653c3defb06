// The speaker-count hint (DiarizeOptions.speakers, StreamOptions.speakers) of the BIC diarizer on real conversations
// of the diarization corpus (test/diarization-corpus.ts: Asterisk prompt voices and a LibriVox reader). The two
// conversations are ones the automatic count gets wrong: the Russian prompt voice and the LibriVox reader (2 voices)
// come out as 4 speakers, and June, the Russian voice, the reader and Allison (4 voices) as 2.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadVad, type Vad } from '../../audio/vad.js';
import { buildConversation, type Conversation, realSpeakers } from '../../../test/diarization-corpus.js';
import { ROOT } from '../../../test/harness.js';
import { diarizationErrorRate } from './der.js';
import { BicDiarizer } from './index.js';
import type { SpeakerCount, SpeakerTurn } from './interface.js';
import { OnlineClusterer } from './online-clusterer.js';
import { speakerRange } from './speaker-count.js';
import { type SpeakerFrame, SpeakerFrameExtractor } from './speech-frames.js';

let vad: Vad;
let diarizer: BicDiarizer;
let two: Conversation;
let four: Conversation;
let one: Conversation;
let alone: Conversation;

beforeAll(async () => {
  vad = await loadVad({ log: () => {} });
  diarizer = new BicDiarizer({ vad });
  const voices = new Map(realSpeakers().map((s) => [s.name, s]));
  const pick = (...names: string[]) => {
    const found = names.map((n) => voices.get(n));
    if (found.some((v) => !v)) throw new Error('needs asterisk-core-sounds-{en,fr,ru}-wav and pocketsphinx-testdata (scripts/debian-packages.txt)');
    return found.map((v) => v!);
  };
  // The benchmark's 2-speaker conversation of seed 2 and its 4-speaker one of seed 1 (bench/diarization.ts).
  two = buildConversation(pick('ivrvoice-ru', 'librivox'), { turns: 14, seed: 2 });
  four = buildConversation(pick('june', 'ivrvoice-ru', 'librivox', 'allison'), { turns: 14, seed: 1 });
  // One prompt of 1.3 s: a single window of speech.
  one = buildConversation(pick('allison'), { turns: 1, seed: 1 });
  // Eight of Allison's prompts, 23 s: one voice.
  alone = buildConversation(pick('allison'), { turns: 8, seed: 1 });
}, 60_000);

const chunked = (pcm: Int16Array, bytes = 6400): Buffer[] => {
  const buf = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  const out: Buffer[] = [];
  for (let i = 0; i < buf.length; i += bytes + 1) out.push(buf.subarray(i, i + bytes + 1));
  return out;
};

/** The turns of a conversation under a hint, each diarized once for all the tests. */
const done = new Map<string, Promise<SpeakerTurn[]>>();
function diarized(conv: Conversation, speakers?: SpeakerCount): Promise<SpeakerTurn[]> {
  const key = `${[two, four, one, alone].indexOf(conv)} ${JSON.stringify(speakers ?? null)}`;
  let turns = done.get(key);
  if (!turns) done.set(key, (turns = diarizer.diarize(chunked(conv.pcm), { speakers })));
  return turns;
}

/** The live labels of `two` without a hint, measured at bea15b6 (before this option). */
const LIVE_BEFORE = [0, 1, 0, 1, 0, 1, 0, 1, 2, 1, 2, 1, 0, 1];

const labels = (turns: { speaker: number | undefined }[]) => new Set(turns.map((t) => t.speaker));

/** Each reference turn's speaker as a live session asks it: 600 ms of audio after the turn (its tokens final). */
async function streamed(conv: Conversation, speakers?: SpeakerCount, by: Pick<BicDiarizer, 'createStream'> = diarizer): Promise<(number | undefined)[]> {
  const stream = by.createStream({ speakers });
  const asked: (number | undefined)[] = [];
  let next = 0;
  let fed = 0;
  for (const c of chunked(conv.pcm)) {
    await stream.push(c);
    fed += c.length / 32;
    while (next < conv.turns.length && conv.turns[next]!.endMs + 600 <= fed) {
      const t = conv.turns[next++]!;
      asked.push(stream.speakerAt(t.startMs, t.endMs));
    }
  }
  await stream.flush();
  for (const t of conv.turns.slice(next)) asked.push(stream.speakerAt(t.startMs, t.endMs));
  stream.close();
  return asked;
}

describe('speakerRange', () => {
  it('turns a hint into bounds and refuses what cannot be a count', () => {
    expect(speakerRange(undefined)).toEqual({ min: 1, max: Infinity });
    expect(speakerRange({ min: 3, max: 3 })).toEqual({ min: 3, max: 3 });
    expect(speakerRange({ max: 5 })).toEqual({ min: 1, max: 5 });
    expect(speakerRange({ min: 2 })).toEqual({ min: 2, max: Infinity });
    for (const bad of [{ min: 0 }, { max: 0 }, { min: 1.5 }, { max: Number.NaN }, { min: 3, max: 2 }, { min: -1 }]) {
      expect(() => speakerRange(bad)).toThrow(RangeError);
    }
  });
});

describe('BicDiarizer with a speaker count', () => {
  it('without a hint: the turns it gave before the hint existed, offline and live', async () => {
    // Measured at bea15b6, before this option: start-end:speaker of each turn, and the live labels per turn. A
    // deliberate change to the clustering changes these.
    const before = [
      '20-2630:0 2630-3120:1 3960-4360:1 4360-6030:2 6030-6480:1 7190-7640:1 7640-8840:0 8840-9330:1 10290-10710:1',
      '10710-16380:2 16380-16820:1 17880-18330:1 18330-23250:0 23250-23700:1 24470-24870:1 24870-27150:2 27150-28870:3',
      '28870-30130:1 30130-31320:0 31320-32650:1 32650-37270:2 37270-37750:1 38640-39110:1 39110-42590:0 42590-44060:1',
      '44060-46060:2 46060-46520:1 47060-47530:1 47530-48180:0 48180-49540:1 49540-55280:2 55280-55730:1 56850-57320:1',
      '57320-61510:0 61510-62760:1 62760-65090:2 65090-67250:3',
    ].join(' ');
    const show = (turns: SpeakerTurn[]) => turns.map((t) => `${t.startMs}-${t.endMs}:${t.speaker}`).join(' ');
    expect(show(await diarized(two))).toBe(before);
    expect(show(await diarized(two, {}))).toBe(before);
    expect(await streamed(two)).toEqual(LIVE_BEFORE);
  }, 120_000);

  it('the true count exactly: that many speakers, and closer to the reference', async () => {
    for (const [conv, n, automatic] of [
      [two, 2, 4],
      [four, 4, 2],
    ] as const) {
      const auto = diarizationErrorRate(conv.turns, await diarized(conv));
      const hinted = diarizationErrorRate(conv.turns, await diarized(conv, { min: n, max: n }));
      expect(auto.hypothesisSpeakers).toBe(automatic);
      expect(hinted.hypothesisSpeakers).toBe(n);
      expect(hinted.der).toBeLessThan(auto.der);
    }
  }, 240_000);

  it('a max below the automatic count: at most max', async () => {
    expect(labels(await diarized(two)).size).toBe(4);
    expect(labels(await diarized(two, { max: 3 })).size).toBe(3);
    expect(labels(await diarized(two, { max: 1 }))).toEqual(new Set([0]));
  }, 120_000);

  it('a min above the automatic count: at least min when that many voices speak', async () => {
    expect(labels(await diarized(four)).size).toBe(2);
    expect(labels(await diarized(four, { min: 3 })).size).toBeGreaterThanOrEqual(3);
    expect(labels(await diarized(four, { min: 4, max: 6 })).size).toBeGreaterThanOrEqual(4);
  }, 120_000);

  it('a min beyond the speech there is: one speaker per window, no more', async () => {
    const turns = await diarized(one, { min: 3, max: 3 });
    expect(turns.length).toBeGreaterThan(0);
    expect(labels(turns)).toEqual(new Set([0]));
  }, 60_000);

  it('live: a max caps the speaker numbers from the first window; a min is not enforced', async () => {
    // Automatically the stream hands out 3 numbers for the two voices (LIVE_BEFORE); with the count, 2.
    const capped = await streamed(two, { min: 2, max: 2 });
    expect(new Set(capped)).toEqual(new Set([0, 1]));
    const der = (asked: (number | undefined)[]) =>
      diarizationErrorRate(
        two.turns,
        two.turns.map((t, i) => ({ ...t, speaker: asked[i] ?? -1 })),
      ).der;
    expect(der(capped)).toBeLessThan(der(LIVE_BEFORE));
    // One voice with a min of 2: the stream cannot know a second will come, and does not split the first.
    expect(new Set(await streamed(alone, { min: 2 }))).toEqual(new Set([0]));
  }, 120_000);

  it('live, past the re-clustering: a window joins the nearest of max speakers rather than open another', async () => {
    const extractor = new SpeakerFrameExtractor(vad.createStream());
    const frames: SpeakerFrame[] = [];
    for (const c of chunked(four.pcm)) frames.push(...(await extractor.push(c)));
    frames.push(...(await extractor.flush()));
    // Every window assigned incrementally, as in a stream older than its re-clustering.
    const numbers = (speakers?: SpeakerCount) => {
      const clusterer = new OnlineClusterer({ reclusterMaxWindows: 0, speakers });
      clusterer.add(frames);
      clusterer.flush();
      return new Set(clusterer.windows.map((w) => w.speaker));
    };
    expect(numbers().size).toBe(5);
    expect(numbers({ max: 3 })).toEqual(new Set([0, 1, 2]));
    expect(numbers({ min: 2, max: 2 })).toEqual(new Set([0, 1]));
  }, 60_000);

  it('on the worker threads (the compiled diarizer): the turns and live labels the inline code gives', async () => {
    const dist = path.join(ROOT, 'dist', 'engines', 'diarization', 'index.js');
    if (!existsSync(dist)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
    const compiled = (await import(pathToFileURL(dist).href)) as typeof import('./index.js');
    const off = new compiled.BicDiarizer({ log: () => {} });
    expect(await off.diarize(chunked(four.pcm), { speakers: { min: 4, max: 4 } })).toEqual(await diarized(four, { min: 4, max: 4 }));
    expect(await streamed(two, { max: 2 }, off)).toEqual(await streamed(two, { max: 2 }));
  }, 240_000);

  it('a hint out of range is refused before any audio is read', async () => {
    let read = 0;
    function* audio() {
      for (const c of chunked(two.pcm)) {
        read++;
        yield c;
      }
    }
    await expect(diarizer.diarize(audio(), { speakers: { min: 3, max: 2 } })).rejects.toThrow(RangeError);
    await expect(diarizer.diarize(audio(), { speakers: { min: 0 } })).rejects.toThrow(RangeError);
    expect(read).toBe(0);
    expect(() => diarizer.createStream({ speakers: { max: 2.5 } })).toThrow(RangeError);
  });
});
