// What the Wyoming test files share: the protocol client (../wyoming-client.ts) and a look at the TTS slots.
import type { Parlance } from '../harness.js';

export { type Event, freePort, WyomingClient } from '../wyoming-client.js';

/** TTS requests and streams holding a concurrency slot of the server's project now. */
export async function ttsActive(s: Parlance): Promise<number> {
  const res = await s.request('/v1/concurrency-limits');
  return ((await res.json()) as { project: { current: { tts_concurrent: number } } }).project.current.tts_concurrent;
}
