// voiceProfile of 16 kHz PCM on a worker thread (one, started on first use, unref'd), so measuring reference
// clips and built-in voices never stalls HTTP and WebSocket traffic. Running from TypeScript sources (tests
// that import modules directly) there is no compiled worker: the profile is computed inline instead.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { pcmToFloat, type VoiceProfile, voiceProfile } from './features.js';

const WORKER_FILE = fileURLToPath(new URL('./profile-worker.js', import.meta.url));

let worker: Worker | undefined;
let nextId = 0;
const pending = new Map<number, { resolve(p: VoiceProfile): void; reject(e: Error): void }>();

function getWorker(): Worker | undefined {
  if (worker) return worker;
  if (!existsSync(WORKER_FILE)) return undefined;
  const w = new Worker(WORKER_FILE);
  w.unref();
  w.on('message', (m: { id: number; profile?: VoiceProfile; error?: string }) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (!p) return;
    if (m.profile) p.resolve(m.profile);
    else p.reject(new Error(m.error ?? 'profile worker failed'));
  });
  const failAll = (err: Error) => {
    worker = undefined;
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  w.on('error', failAll);
  w.on('exit', (code) => failAll(new Error(`profile worker exited with ${code}`)));
  worker = w;
  return w;
}

export function voiceProfileOffThread(pcm16k: Buffer): Promise<VoiceProfile> {
  const w = getWorker();
  if (!w) return Promise.resolve(voiceProfile(pcmToFloat(pcm16k)));
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    w.postMessage({ id, pcm: pcm16k });
  });
}
