// Naming live audio by enrolled voices, on prints of real recordings (Debian's Asterisk prompts, test/diarization-
// corpus.ts): each clustered window is judged alone, so a live speaker that merged two enrolled voices names each by
// its own windows and a voice never enrolled stays unnamed; a window's name needs enough of its live speaker's judged
// speech to agree; and tokens are named by the closed window they fall in, else by the open one.
import { beforeAll, describe, expect, it } from 'vitest';
import { loadVad } from '../../audio/vad.js';
import { type CorpusSpeaker, decodeFile, realSpeakers } from '../../../test/diarization-corpus.js';
import { BicDiarizer } from './index.js';
import { identifyLive, LiveNameBook } from './live-identifier.js';
import type { ClosedWindow } from './online-clusterer.js';
import type { VoicePrint } from './interface.js';
import { identifyTurn, MIN_HEARD_SPEECH_MS, mergePrints, statsOfPrint } from './voice-print.js';

let diarizer: BicDiarizer;
let speakers: Map<string, CorpusSpeaker>;
const thresholds = { maxDistance: 0.4, minSimilarity: 0.5, minSpeechMs: MIN_HEARD_SPEECH_MS };

const bytes = (pcm: Int16Array) => [Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength)];
const printOfClip = async (clip: string): Promise<VoicePrint> => (await diarizer.measure(bytes(decodeFile(clip)))).get(0)!;
/** Enrolment from the end of a speaker's list, live windows from its start: never the same clip. */
const enrolled = async (name: string) => mergePrints(await Promise.all(speakers.get(name)!.clips.slice(-8).map(printOfClip)));

/** Closed windows of one clip each, 3 s apart, all of live speaker `speaker` unless given. */
function windowsOf(prints: VoicePrint[], speaker = 0): ClosedWindow[] {
  return prints.map((p, i) => ({ startMs: i * 3000, endMs: i * 3000 + 2500, speaker, stats: statsOfPrint(p) }));
}

beforeAll(async () => {
  diarizer = new BicDiarizer({ vad: await loadVad({ log: () => {} }) });
  speakers = new Map(realSpeakers().map((s) => [s.name, s]));
}, 60_000);

describe('identifyLive', () => {
  it('names each window of a live speaker that merged two enrolled voices by its own voice; the voice not enrolled gets none', async () => {
    const profiles = [await enrolled('allison'), await enrolled('june')];
    /** The first `n` clips of a voice that `index` (an enrolled voice, or none) is what its profiles make of each alone. */
    const clipsJudged = async (name: string, index: number | undefined, n = 3) => {
      const out: VoicePrint[] = [];
      for (const clip of speakers.get(name)!.clips.slice(0, 12)) {
        const p = await printOfClip(clip);
        if (identifyTurn(p, profiles, thresholds) === index) out.push(p);
        if (out.length === n) break;
      }
      expect(out, `${n} clips of ${name}`).toHaveLength(n);
      return out;
    };
    // One live speaker (0) holding both enrolled voices and the Russian one, interleaved.
    const [a, j, r] = [await clipsJudged('allison', 0), await clipsJudged('june', 1), await clipsJudged('ivrvoice-ru', undefined)];
    const voices = [0, 1, 2].flatMap((k) => [['allison', a[k]!] as const, ['june', j[k]!] as const, ['ivrvoice-ru', r[k]!] as const]);
    const names = new Map(identifyLive(windowsOf(voices.map(([, p]) => p)), undefined, { prints: profiles, thresholds })!.windows);
    const got = voices.map(([n], i) => [n, names.get(i)] as const);
    expect(got).toEqual(voices.map(([n]) => [n, n === 'allison' ? 0 : n === 'june' ? 1 : undefined]));
  }, 180_000);

  it("keeps a window's own name only when enough of its live speaker's judged speech agrees", async () => {
    const profiles = [await enrolled('allison'), await enrolled('june')];
    const allison = await Promise.all(speakers.get('allison')!.clips.slice(0, 6).map(printOfClip));
    // A June clip June's profile names on its own, inside a live speaker that is otherwise Allison.
    let june: VoicePrint | undefined;
    for (const clip of speakers.get('june')!.clips.slice(0, 6)) {
      const p = await printOfClip(clip);
      if (identifyTurn(p, profiles, thresholds) === 1) june = p;
      if (june) break;
    }
    expect(june, 'a June clip her profile names').toBeDefined();
    const windows = windowsOf([...allison, june!]);
    const at = (ownShare: number) => new Map(identifyLive(windows, undefined, { prints: profiles, thresholds }, { ownShare })!.windows).get(allison.length);
    expect(at(0)).toBe(1);
    expect(at(0.2)).toBeUndefined(); // one window in seven: too little of the speaker's speech
    // As its own live speaker, it keeps the name.
    const apart = [...windowsOf(allison), { ...windows.at(-1)!, speaker: 1 }];
    expect(new Map(identifyLive(apart, undefined, { prints: profiles, thresholds })!.windows).get(allison.length)).toBe(1);
  }, 180_000);

  it("names audio by the closed window it falls in, else by the open window, else by the nearest window's speaker", async () => {
    const profiles = [await enrolled('allison')];
    const allison = await Promise.all(speakers.get('allison')!.clips.slice(0, 2).map(printOfClip));
    const windows = windowsOf(allison);
    const open: ClosedWindow = { startMs: 6000, endMs: 8500, speaker: 0, stats: statsOfPrint(allison[0]!) };
    const book = new LiveNameBook();
    const names = identifyLive(windows, open, { prints: profiles, thresholds })!;
    book.update(names);
    const closedName = names.windows.find(([i]) => i === 0)?.[1];
    expect(closedName).toBe(0);
    expect(book.nameAt(windows, 500, 900, undefined)).toBe(closedName);
    expect(names.open).toBe(0);
    expect(book.nameAt(windows, 6500, 7000, { endMs: 8500, speaker: 0 })).toBe(names.open);
    // Past every window with no open one: the nearest window's live speaker, named by most of its windows.
    expect(new Map(names.speakers).get(0)).toBe(0);
    expect(book.nameAt(windows, 20_000, 20_500, undefined)).toBe(0);
    // A long session reports the last minute's windows only (tokens are labelled seconds after their audio).
    const long = windowsOf(Array.from({ length: 30 }, (_, i) => allison[i % 2]!));
    const reported = identifyLive(long, undefined, { prints: profiles, thresholds })!.windows.map(([i]) => i);
    expect(reported.length).toBeGreaterThan(0);
    expect(Math.min(...reported.map((i) => long[i]!.endMs))).toBeGreaterThanOrEqual(long.at(-1)!.endMs - 60_000);
    expect(reported).toContain(29);
    // Nothing enrolled: no names at all.
    expect(identifyLive(windows, open, undefined)).toBeUndefined();
    book.update(undefined);
    expect(book.nameAt(windows, 500, 900, undefined)).toBeUndefined();
  }, 120_000);
});
