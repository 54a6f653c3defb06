// Which live speakers are enrolled voices: after each piece of a stream, every clustered window of speech (up to
// 2.5 s) is judged on its own against the enrolled prints, and a speaker takes the name most of its judged windows
// got (voice-print.ts judgeTurns), so a live speaker that merged two voices gets no name rather than a wrong one. A
// speaker keeps no name until it has enough speech to judge; the answer can change while it grows, and tokens
// labelled before keep the label they got.
import type { LiveEnrolled } from './diarize-worker-messages.js';
import type { OnlineClusterer } from './online-clusterer.js';
import type { SpeakerStats } from './speaker-stats.js';
import { identifyTurn, judgeTurns, printOfStats, type VoicePrint } from './voice-print.js';

/** A closed window never changes: its print and its own judgement are worked out once (by stream: its enrolled set). */
const judged = new WeakMap<SpeakerStats, { print: VoicePrint; index?: number | undefined; done?: boolean }>();

export function identifyLive(clusterer: OnlineClusterer, enrolled: LiveEnrolled | undefined): [number, number][] | undefined {
  if (!enrolled?.prints.length) return undefined;
  const windows = clusterer.windows;
  const entry = (stats: SpeakerStats) => {
    let e = judged.get(stats);
    if (!e) judged.set(stats, (e = { print: printOfStats(stats) }));
    return e;
  };
  const prints = new Map(windows.map((w, i) => [i, entry(w.stats).print]));
  const { speakerName } = judgeTurns(windows, prints, enrolled.prints, enrolled.thresholds, undefined, (i, print) => {
    const e = entry(windows[i]!.stats);
    if (!e.done) Object.assign(e, { done: true, index: identifyTurn(print, enrolled.prints, enrolled.thresholds) });
    return e.index;
  });
  return [...speakerName].flatMap(([speaker, index]) => (index === undefined ? [] : [[speaker, index] as [number, number]]));
}
