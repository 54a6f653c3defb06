// Worker-thread entry for diarization: voice activity detection, MFCC and pitch frames and the BIC clustering are
// seconds of CPU per minute of audio, all kept off the event loop. Files on one lane (batch priority), live streams
// on another (the server's priority), each lane its own thread running this file. One detector per model, loaded on
// first use; one frame extractor per file or stream.
import { loadVad, type Vad, type VadBackend } from '../../audio/vad.js';
import { serveLane } from '../../lib/worker-lane.js';
import type { DiarizeRequest, DiarizeResult } from './diarize-worker-messages.js';
import type { LiveEnrolled } from './interface.js';
import { clusterOffline, type OfflineClusterOptions } from './offline-clusterer.js';
import { identifyLive } from './live-identifier.js';
import { OnlineClusterer } from './online-clusterer.js';
import { type SpeakerFrame, SpeakerFrameExtractor } from './speech-frames.js';
import { TurnStats } from './turn-stats.js';

const vads = new Map<string, Vad>();
const jobs = new Map<number, { extractor: SpeakerFrameExtractor; frames: SpeakerFrame[]; offline?: OfflineClusterOptions }>();
const live = new Map<number, { extractor: SpeakerFrameExtractor; clusterer: OnlineClusterer; enrolled?: LiveEnrolled }>();
const measures = new Map<number, { extractor: SpeakerFrameExtractor; stats: TurnStats }>();

type Warning = { msg: string; detail?: Record<string, unknown> };

async function vadFor(req: { vad: { backend?: VadBackend; modelPath?: string } }): Promise<{ vad: Vad; warning?: Warning }> {
  const key = `${req.vad.backend ?? 'silero'}:${req.vad.modelPath ?? ''}`;
  let warning: Warning | undefined;
  let vad = vads.get(key);
  if (!vad) {
    vad = await loadVad({ ...req.vad, log: (_level, msg, detail) => (warning = { msg, detail }) });
    vads.set(key, vad);
  }
  return { vad, warning };
}

function liveJob(id: number) {
  const job = live.get(id);
  if (!job) throw new Error(`no live diarization ${id}`);
  return job;
}

async function handle(req: DiarizeRequest): Promise<DiarizeResult> {
  switch (req.op) {
    case 'open': {
      const { vad, warning } = await vadFor(req);
      jobs.set(req.job, { extractor: new SpeakerFrameExtractor(vad.createStream()), frames: [], offline: req.offline });
      return { opened: true, warning };
    }
    case 'live-open': {
      const { vad, warning } = await vadFor(req);
      live.set(req.job, { extractor: new SpeakerFrameExtractor(vad.createStream()), clusterer: new OnlineClusterer(req.online), enrolled: req.enrolled });
      return { opened: true, warning };
    }
    case 'live-push': {
      const job = liveJob(req.job);
      job.clusterer.add(await job.extractor.push(req.pcm));
      return { changes: job.clusterer.changes(), names: identifyLive(job.clusterer.windows, job.clusterer.openWindow(), job.enrolled, job.enrolled?.rule) };
    }
    case 'live-flush': {
      const job = liveJob(req.job);
      job.clusterer.add(await job.extractor.flush());
      job.clusterer.flush();
      return { changes: job.clusterer.changes(), names: identifyLive(job.clusterer.windows, job.clusterer.openWindow(), job.enrolled, job.enrolled?.rule) };
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
    case 'measure-open': {
      const { vad, warning } = await vadFor(req);
      measures.set(req.job, { extractor: new SpeakerFrameExtractor(vad.createStream()), stats: new TurnStats(req.turns) });
      return { opened: true, warning };
    }
    case 'measure-push': {
      const job = measures.get(req.job);
      if (!job) throw new Error(`no measurement ${req.job}`);
      job.stats.add(await job.extractor.push(req.pcm));
      return { ok: true };
    }
    case 'measure-end': {
      const job = measures.get(req.job);
      measures.delete(req.job);
      if (!job) throw new Error(`no measurement ${req.job}`);
      job.stats.add(await job.extractor.flush());
      return { prints: job.stats.prints() };
    }
    case 'close':
      jobs.delete(req.job);
      live.delete(req.job);
      measures.delete(req.job);
      return { ok: true };
  }
}

serveLane(handle);
