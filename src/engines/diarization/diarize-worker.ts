// Worker-thread entry for file diarization: voice activity detection, MFCC and pitch frames and the BIC clustering
// of a whole file are seconds of CPU per minute of audio, all kept off the event loop (at batch priority, set by the
// lane). One detector per model, loaded on first use; one frame extractor per file being diarized.
import { loadVad, type Vad } from '../../audio/vad.js';
import { serveLane } from '../../lib/worker-lane.js';
import type { DiarizeRequest, DiarizeResult } from './diarize-worker-messages.js';
import { clusterOffline, type OfflineClusterOptions } from './offline-clusterer.js';
import { type SpeakerFrame, SpeakerFrameExtractor } from './speech-frames.js';

const vads = new Map<string, Vad>();
const jobs = new Map<number, { extractor: SpeakerFrameExtractor; frames: SpeakerFrame[]; offline?: OfflineClusterOptions }>();

async function handle(req: DiarizeRequest): Promise<DiarizeResult> {
  switch (req.op) {
    case 'open': {
      const key = `${req.vad.backend ?? 'silero'}:${req.vad.modelPath ?? ''}`;
      let warning: { msg: string; detail?: Record<string, unknown> } | undefined;
      let vad = vads.get(key);
      if (!vad) {
        vad = await loadVad({ ...req.vad, log: (_level, msg, detail) => (warning = { msg, detail }) });
        vads.set(key, vad);
      }
      jobs.set(req.job, { extractor: new SpeakerFrameExtractor(vad.createStream()), frames: [], offline: req.offline });
      return { opened: true, warning };
    }
    case 'push': {
      const job = jobs.get(req.job);
      if (!job) throw new Error(`no diarization ${req.job}`);
      for (const f of await job.extractor.push(req.pcm)) job.frames.push(f);
      return { ok: true };
    }
    case 'end': {
      const job = jobs.get(req.job);
      jobs.delete(req.job);
      if (!job) throw new Error(`no diarization ${req.job}`);
      for (const f of await job.extractor.flush()) job.frames.push(f);
      return { turns: await clusterOffline(job.frames, job.offline) };
    }
    case 'close':
      jobs.delete(req.job);
      return { ok: true };
  }
}

serveLane(handle);
