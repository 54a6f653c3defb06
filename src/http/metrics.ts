// Prometheus metrics of one node (prom-client): the process's defaults (CPU, memory, event-loop delay), HTTP
// requests by route and status with latency histograms, job durations and queue depth by kind, webhook outcomes,
// usage recorded, engine slots, STT models that failed to load, and gauges the services report through read callbacks.
// Served at GET /metrics; with PARLANCE_METRICS_TOKEN set, only to `Authorization: Bearer <token>`.
import { AsyncLocalStorage } from 'node:async_hooks';
import { timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { SttRegistry } from '../engines/stt/registry.js';
import {
  type EnqueueOptions,
  type Job,
  type JobHandler,
  type JobQueue,
  type JsonValue,
  PermanentJobError,
  type QueueStats,
  type WorkOptions,
} from '../jobs/queue.js';
import type { WebhookSender } from '../modules/transcriptions/outbound-http.js';
import { TranscriptionsRepository } from '../modules/transcriptions/repository.js';
import { PROCESS_JOB, WEBHOOK_JOB } from '../modules/transcriptions/service.js';
import type { UsageKind, UsageMeter } from '../modules/usage/service.js';
import { VoicesRepository } from '../modules/voices/repository.js';
import { PREPARE_JOB } from '../modules/voices/service.js';
import { webhookOutcome, type WebhookOutcome } from '../modules/webhooks/delivery.js';
import type { Database } from '../storage/schema.js';

/** Job kinds as metric labels. */
const JOB_KINDS: Record<string, string> = { [PROCESS_JOB]: 'transcription', [PREPARE_JOB]: 'voice_preparation', [WEBHOOK_JOB]: 'webhook' };
const jobLabel = (kind: string) => JOB_KINDS[kind] ?? kind;

/** How a job's run ended: `failed` includes a job that ran to its end and recorded a failure (bad audio, a bad clip). */
export type JobOutcome = 'completed' | 'failed' | 'retried' | 'interrupted';

const WEBHOOK_OUTCOMES: WebhookOutcome[] = ['delivered', 'failed', 'retried', 'refused'];
const USAGE_KINDS: UsageKind[] = ['stt_async', 'stt_rt', 'tts', 'speaker_enrolment'];

type Sample<L extends string> = [labels: Partial<Record<L, string>>, value: number];

/** One pool of engine slots as the engines report it: of one STT model, or of the node (TTS synthesizer processes). */
export interface EngineSlots {
  pool: string;
  model?: string;
  busy: number;
  total: number;
}

/** How a model pull ends: ready, or the error type of its failed record. */
export const MODEL_PULL_OUTCOMES = [
  'ready',
  'model_not_available',
  'file_download_blocked',
  'file_download_failed',
  'invalid_model_archive',
  'internal_error',
] as const;

export class Metrics {
  readonly registry = new Registry();
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  readonly refusals: Counter<'kind'>;
  readonly finalTokenLag: Histogram;
  readonly secondPass: Counter<'outcome'>;
  readonly jobDuration: Histogram<'kind' | 'outcome'>;
  readonly webhookDeliveries: Counter<'outcome'>;
  readonly usageAudio: Counter<'kind'>;
  readonly modelPulls: Counter<'outcome'>;
  readonly modelLoadSeconds: Histogram<'model'>;

  constructor() {
    // Event-loop delay sampled every 10 ms (nodejs_eventloop_lag_p99_seconds and the others).
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 10 });
    this.httpDuration = new Histogram({
      name: 'parlance_http_request_duration_seconds',
      help: 'HTTP requests by method, route pattern and status: time to the end of the response.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [this.registry],
    });
    this.refusals = new Counter({
      name: 'parlance_admission_refusals_total',
      help: 'Requests and streams refused at once (429) because this node was saturated, by kind of work.',
      labelNames: ['kind'],
      registers: [this.registry],
    });
    this.finalTokenLag = new Histogram({
      name: 'parlance_realtime_final_token_lag_seconds',
      help: 'Real-time final tokens: time from the arrival of their audio to their frame (clients streaming in real time).',
      buckets: [0.1, 0.25, 0.5, 1, 1.5, 2, 3, 5, 10, 30],
      registers: [this.registry],
    });
    this.secondPass = new Counter({
      name: 'parlance_realtime_second_pass_total',
      help: 'Utterances of finished real-time sessions by where their final tokens came from: decoded again (decoded), or the streaming words because the budget was spent (skipped), the second pass was too slow (late) or failed (failed).',
      labelNames: ['outcome'],
      registers: [this.registry],
    });
    this.jobDuration = new Histogram({
      name: 'parlance_job_duration_seconds',
      help: 'Async job runs on this node by kind (transcription, voice_preparation, webhook) and outcome: completed, failed (including a job that recorded a failure such as undecodable audio), retried (an error; it runs again), interrupted (the node stopped or lost the job).',
      labelNames: ['kind', 'outcome'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800],
      registers: [this.registry],
    });
    this.webhookDeliveries = new Counter({
      name: 'parlance_webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome: delivered (2xx), retried (network error, timeout or 5xx; tried again later), failed (any other answer, or the last attempt), refused (the address is private or reserved; PARLANCE_ALLOW_PRIVATE_HOSTS).',
      labelNames: ['outcome'],
      registers: [this.registry],
    });
    this.usageAudio = new Counter({
      name: 'parlance_usage_audio_seconds_total',
      help: 'Audio seconds recorded as usage on this node, by kind: stt_async (transcribed files), stt_rt (real-time sessions), tts (speech made).',
      labelNames: ['kind'],
      registers: [this.registry],
    });
    this.modelPulls = new Counter({
      name: 'parlance_model_pulls_total',
      help: 'Model pulls (POST /v1/admin/models, PARLANCE_MODELS) run on this node by outcome: ready, or the error type they failed with (model_not_available, file_download_blocked, file_download_failed, invalid_model_archive, internal_error).',
      labelNames: ['outcome'],
      registers: [this.registry],
    });
    this.modelLoadSeconds = new Histogram({
      name: 'parlance_model_load_seconds',
      help: 'Speech-to-text model loads on this node by model: from the first request (or the preload) to the loaded recognizer.',
      labelNames: ['model'],
      buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers: [this.registry],
    });
    // Every series from the start, so rates work before the first event.
    for (const outcome of WEBHOOK_OUTCOMES) this.webhookDeliveries.inc({ outcome }, 0);
    for (const kind of USAGE_KINDS) this.usageAudio.inc({ kind }, 0);
    for (const outcome of MODEL_PULL_OUTCOMES) this.modelPulls.inc({ outcome }, 0);
  }

  /** A gauge whose value is read when scraped. */
  gauge(name: string, help: string, read: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  /** A gauge with labels whose samples are read when scraped; a read that fails leaves it empty for that scrape. */
  labelledGauge<L extends string>(name: string, help: string, labelNames: readonly L[], read: () => Sample<L>[] | Promise<Sample<L>[]>): void {
    new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        this.reset();
        const samples = await Promise.resolve()
          .then(read)
          .catch(() => []);
        for (const [labels, value] of samples) this.set(labels, value);
      },
    });
  }

  /**
   * Queued jobs by kind: an indexed count of the queued jobs alone, made at most once per `maxAgeMs` whoever scrapes
   * (scrapes in between, and concurrent ones, share it; a failed count is not kept). The queue is shared, so every
   * node reports the same numbers: aggregate with max, not sum.
   */
  queueDepth(queue: Pick<JobQueue, 'queuedCounts'>, opts: { maxAgeMs?: number; now?: () => number } = {}): void {
    const maxAgeMs = opts.maxAgeMs ?? QUEUE_DEPTH_MAX_AGE_MS;
    const now = opts.now ?? Date.now;
    let last: { at: number; samples: Promise<Sample<'kind'>[]> } | undefined;
    const read = (): Promise<Sample<'kind'>[]> => {
      if (!last || now() - last.at >= maxAgeMs) {
        const samples = withinMs(queue.queuedCounts(), QUEUE_READ_MS).then(queuedByKind);
        const entry = { at: now(), samples };
        last = entry;
        samples.catch(() => {
          if (last === entry) last = undefined;
        });
      }
      return last.samples;
    };
    this.labelledGauge(
      'parlance_jobs_queued',
      'Async jobs waiting to run, by kind (transcription, voice_preparation, webhook), including retries waiting out their backoff. Read from the shared queue at most every 5 s: the same on every node.',
      ['kind'],
      read,
    );
  }

  /**
   * Engine slots, busy and in all, as each engine reports its own (pocketsphinx: the batch and streaming decoders of
   * each loaded model; the node's synthesizer process slots). A model not loaded yet has no series.
   */
  engineSlots(engines: { slots(): EngineSlots[] }): void {
    const labels = ({ pool, model }: EngineSlots) => (model ? { pool, model } : { pool });
    this.labelledGauge(
      'parlance_engine_slots',
      'Engine slots on this node by pool (stt_batch: file decoders, stt_streaming: most live decoders, tts_synthesis: synthesizer processes) and STT model.',
      ['pool', 'model'],
      () => engines.slots().map((p): Sample<'pool' | 'model'> => [labels(p), p.total]),
    );
    this.labelledGauge('parlance_engine_slots_busy', 'Engine slots in use now, by pool and STT model (see parlance_engine_slots).', ['pool', 'model'], () =>
      engines.slots().map((p): Sample<'pool' | 'model'> => [labels(p), p.busy]),
    );
  }

  /** Every STT model, 1 while its last load failed (requests for it get model_not_available), else 0. */
  modelLoadFailures(stt: SttRegistry): void {
    this.labelledGauge(
      'parlance_stt_model_load_failed',
      'STT models by id: 1 when its last load failed (requests for it get model_not_available; the reason is logged), 0 when it loaded or was not tried yet.',
      ['model'],
      () => stt.list().map((m): Sample<'model'> => [{ model: m.id }, stt.loadFailure(m.id) === undefined ? 0 : 1]),
    );
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** Longest a scrape waits for the queue's counts (a database that does not answer leaves the gauge empty). */
const QUEUE_READ_MS = 1000;
/** How long one count of the queued jobs serves scrapes (several Prometheus servers, every node of a cluster). */
const QUEUE_DEPTH_MAX_AGE_MS = 5000;

function withinMs<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function queuedByKind(queued: Record<string, number>): Sample<'kind'>[] {
  const depth = new Map(Object.values(JOB_KINDS).map((k) => [k, 0]));
  for (const [kind, n] of Object.entries(queued)) depth.set(jobLabel(kind), (depth.get(jobLabel(kind)) ?? 0) + n);
  return [...depth].map(([kind, n]) => [{ kind }, n]);
}

const runningJob = new AsyncLocalStorage<Job>();

/** The job whose handler is running (handlers registered through observeJobs), for code called from it. */
export function currentJob(): Job | undefined {
  return runningJob.getStore();
}

/** How a handler's run ended, as the queue will treat it (queue/runner.ts). */
function runOutcome(err: unknown, job: Job): JobOutcome {
  if (err instanceof PermanentJobError) return 'failed';
  if (job.signal.aborted) return 'interrupted';
  return job.attempt < job.maxAttempts ? 'retried' : 'failed';
}

/**
 * The queue with every handler timed into parlance_job_duration_seconds. Transcriptions and voice preparations
 * record failures of their input on their rows and end normally, so their rows are read (by key) after the run.
 */
export function observeJobs(queue: JobQueue, metrics: Metrics, db: Kysely<Database>): JobQueue {
  const transcriptions = new TranscriptionsRepository(db);
  const voices = new VoicesRepository(db);
  const recordFailed = async (job: Job): Promise<boolean> => {
    const p = job.payload as Record<string, string>;
    if (job.kind === PROCESS_JOB) return (await transcriptions.getById(p.id ?? ''))?.status === 'failed';
    if (job.kind === PREPARE_JOB) return (await voices.model(p.voice_id ?? '', p.model ?? ''))?.status === 'failed';
    return false;
  };
  return new ObservedJobQueue(queue, async (job, run) => {
    const started = performance.now();
    const observe = (outcome: JobOutcome, ended = performance.now()) =>
      metrics.jobDuration.observe({ kind: jobLabel(job.kind), outcome }, (ended - started) / 1000);
    try {
      await runningJob.run(job, run);
    } catch (err) {
      observe(runOutcome(err, job));
      throw err;
    }
    const ended = performance.now();
    // Not awaited: the metric never holds up the job's completion.
    void recordFailed(job)
      .catch(() => false)
      .then((failed) => observe(failed ? 'failed' : 'completed', ended));
  });
}

class ObservedJobQueue implements JobQueue {
  constructor(
    private readonly queue: JobQueue,
    private readonly observe: (job: Job, run: () => Promise<void>) => Promise<void>,
  ) {}

  enqueue<P extends JsonValue>(kind: string, payload: P, options?: EnqueueOptions): Promise<string> {
    return this.queue.enqueue(kind, payload, options);
  }

  work<P extends JsonValue>(kind: string, handler: JobHandler<P>, options: WorkOptions): void {
    this.queue.work<P>(kind, (job) => this.observe(job as Job, () => handler(job)), options);
  }

  start(): Promise<void> {
    return this.queue.start();
  }

  stop(): Promise<void> {
    return this.queue.stop();
  }

  position(jobId: string): Promise<number | null> {
    return this.queue.position(jobId);
  }

  stats(): Promise<QueueStats> {
    return this.queue.stats();
  }

  queuedCounts(): Promise<Record<string, number>> {
    return this.queue.queuedCounts();
  }
}

/** Webhook attempts counted by outcome (parlance_webhook_deliveries_total); an attempt cut by a stop has none. */
export function observeWebhooks(send: WebhookSender, metrics: Metrics): WebhookSender {
  return async (delivery) => {
    const result = await send(delivery);
    if (!delivery.signal?.aborted) {
      const job = currentJob();
      metrics.webhookDeliveries.inc({ outcome: webhookOutcome(result, job !== undefined && job.attempt >= job.maxAttempts) });
    }
    return result;
  };
}

/** The meter, counting the audio seconds it records (parlance_usage_audio_seconds_total). */
export function countedMeter(meter: UsageMeter, metrics: Metrics): UsageMeter {
  return {
    estimateNano: (model, q) => meter.estimateNano(model, q),
    meter: async (input) => {
      const row = await meter.meter(input);
      metrics.usageAudio.inc({ kind: input.kind }, (row.input_audio_duration_ms + row.output_audio_duration_ms) / 1000);
      return row;
    },
  };
}

/** Whether `authorization` carries `token` (no token configured: everyone may read). */
export function metricsAuthorized(token: string, authorization: string | undefined): boolean {
  if (!token) return true;
  const given = Buffer.from(/^Bearer (.+)$/i.exec(authorization ?? '')?.[1] ?? '');
  const want = Buffer.from(token);
  return given.length === want.length && timingSafeEqual(given, want);
}
