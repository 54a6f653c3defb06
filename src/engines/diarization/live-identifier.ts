// Which live speakers are enrolled voices: after each piece of a stream, every speaker the online clusterer knows is
// compared with the enrolled prints (identifySpeakers). A speaker keeps no name until it has enough speech to judge;
// the answer can change while its model grows, and tokens labelled before keep the label they got.
import type { LiveEnrolled } from './diarize-worker-messages.js';
import type { OnlineClusterer } from './online-clusterer.js';
import { identifySpeakers, printOfStats, type VoicePrint } from './voice-print.js';

export function identifyLive(clusterer: OnlineClusterer, enrolled: LiveEnrolled | undefined): [number, number][] | undefined {
  if (!enrolled?.prints.length) return undefined;
  const heard = new Map<number, VoicePrint>();
  for (const [speaker, stats] of clusterer.speakerModels()) heard.set(speaker, printOfStats(stats));
  return [...identifySpeakers(heard, enrolled.prints, enrolled.thresholds)];
}
