// Which live audio is an enrolled voice. After each piece of a stream, every clustered window of speech (up to
// 2.5 s) is judged on its own against the enrolled prints (voice-print.ts identifyTurn), and each live speaker gets
// the name most of its judged windows got (judgeTurns). A token is named by the window it falls in: the window's own
// name when enough of its live speaker's judged speech (`ownShare`) got that name too, so a live speaker that merged
// two enrolled voices names each by its own windows while one stray window of an unknown voice stays unnamed; a window
// too short to judge takes its speaker's name. Names can change while the stream grows; tokens labelled before keep
// the label they got.
import type { LiveEnrolled, LiveRule, VoicePrint } from './interface.js';
import { type ClosedWindow, type OpenGuess, speakerOfWindows, windowAt, type WindowLabel } from './online-clusterer.js';
import { SpeakerStats } from './speaker-stats.js';
import { identifyTurn, judgeTurns, printOfStats } from './voice-print.js';

/** Names found so far: by live speaker, by closed window (by index) and of the open window (audio not clustered yet). */
export interface LiveNames {
  speakers: [speaker: number, enrolled: number][];
  /** The windows that ended in the last minute before the newest (REPORTED_MS). */
  windows: [window: number, enrolled: number][];
  open?: number;
}

/** Chosen on the benchmark's tune half: docs/benchmarks-history.md#enrolled-speakers. */
export const DEFAULT_LIVE_RULE: LiveRule = { ownShare: 0.2 };

/**
 * Names are reported for the windows that ended within this much of the newest: tokens are labelled as they turn
 * final, seconds after their audio, so older names are never asked for, and a long session's report stays small.
 */
const REPORTED_MS = 60_000;

/** A closed window never changes: its print and its own judgement are worked out once (by stream: its enrolled set). */
const judged = new WeakMap<SpeakerStats, { print: VoicePrint; index?: number | undefined; done?: boolean }>();

/**
 * Names of a live stream's closed windows (OnlineClusterer.windows) and of its open one (openWindow(), judged as it
 * stands: tokens are often final before their window closes).
 */
export function identifyLive(
  closed: readonly ClosedWindow[],
  open: ClosedWindow | undefined,
  enrolled: LiveEnrolled | undefined,
  rule: LiveRule = DEFAULT_LIVE_RULE,
): LiveNames | undefined {
  if (!enrolled?.prints.length) return undefined;
  const windows = open ? [...closed, open] : closed;
  // A closed window's print and judgement are kept; the open one's statistics still grow.
  const entry = (i: number) => {
    const stats = windows[i]!.stats;
    let e = i < closed.length ? judged.get(stats) : undefined;
    if (!e) {
      e = { print: printOfStats(stats) };
      if (i < closed.length) judged.set(stats, e);
    }
    return e;
  };
  const prints = new Map(windows.map((_, i) => [i, entry(i).print]));
  const { own, speakerName } = judgeTurns(windows, prints, enrolled.prints, enrolled.thresholds, undefined, (i, print) => {
    const e = entry(i);
    if (!e.done) Object.assign(e, { done: true, index: identifyTurn(print, enrolled.prints, enrolled.thresholds) });
    return e.index;
  });
  // Judged speech per live speaker, in all and by name.
  const judgedMs = new Map<number, number>();
  const namedMs = new Map<string, number>();
  windows.forEach((w, i) => {
    if (!own[i]!.judged) return;
    const ms = prints.get(i)!.speechMs;
    judgedMs.set(w.speaker, (judgedMs.get(w.speaker) ?? 0) + ms);
    const key = `${w.speaker}:${own[i]!.index}`;
    namedMs.set(key, (namedMs.get(key) ?? 0) + ms);
  });
  // Too short to judge: its speaker's name. Judged: its own, if enough of its speaker's judged speech agrees.
  const nameOf = (i: number) => {
    const { speaker } = windows[i]!;
    const { judged: wasJudged, index } = own[i]!;
    if (!wasJudged) return speakerName.get(speaker);
    return index !== undefined && (namedMs.get(`${speaker}:${index}`) ?? 0) >= rule.ownShare * judgedMs.get(speaker)! ? index : undefined;
  };
  return {
    speakers: [...speakerName].flatMap(([speaker, index]) => (index === undefined ? [] : [[speaker, index] as [number, number]])),
    windows: closed.flatMap((w, i) => {
      const name = w.endMs >= (closed.at(-1)?.endMs ?? 0) - REPORTED_MS ? nameOf(i) : undefined;
      return name === undefined ? [] : [[i, name] as [number, number]];
    }),
    ...(open ? { open: nameOf(closed.length) } : {}),
  };
}

/** The names a stream's thread reported, read where tokens are labelled (nameAt of DiarizationStream). */
export class LiveNameBook {
  private names: LiveNames | undefined;
  private byWindow = new Map<number, number>();
  private bySpeaker = new Map<number, number>();

  update(names: LiveNames | undefined): void {
    this.names = names;
    this.byWindow = new Map(names?.windows);
    this.bySpeaker = new Map(names?.speakers);
  }

  /** The name of the window [startMs, endMs) falls in most: a closed one, else the open one, else the nearest speaker's. */
  nameAt(windows: readonly WindowLabel[], startMs: number, endMs: number, open: OpenGuess | undefined): number | undefined {
    const i = windowAt(windows, startMs, endMs);
    if (i !== undefined) return this.byWindow.get(i);
    if (open && open.endMs >= startMs) return this.names?.open;
    const speaker = speakerOfWindows(windows, startMs, endMs, undefined);
    return speaker === undefined ? undefined : this.bySpeaker.get(speaker);
  }
}
