import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { type Job, type JobHandler, type JobQueue, PermanentJobError } from '../jobs/queue.js';
import type { UsageMeter } from '../modules/usage/service.js';
import type { Database } from '../storage/schema.js';
import { countedMeter, currentJob, Metrics, observeJobs, observeWebhooks } from './metrics.js';

/** The value of one sample line (`name{labels} value`), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** A queue that only keeps handlers, so a test can run one as the runner would. */
function handlerQueue(): JobQueue & { run(kind: string, job: Partial<Job>): Promise<void> } {
  const handlers = new Map<string, JobHandler>();
  return {
    enqueue: async () => 'id',
    work: (kind, handler) => void handlers.set(kind, handler as JobHandler),
    start: async () => {},
    stop: async () => {},
    position: async () => null,
    stats: async () => ({ counts: { 'transcription.process': { queued: 3, running: 1 }, 'transcription.webhook': { queued: 1, completed: 9 } } }),
    queuedCounts: async () => ({ 'transcription.process': 3, 'transcription.webhook': 1 }),
    run: (kind, job) => handlers.get(kind)!({ id: 'j1', kind, payload: {}, attempt: 1, maxAttempts: 3, signal: new AbortController().signal, ...job }),
  };
}

const noDb = {} as Kysely<Database>;

describe('job and webhook metrics', () => {
  it('times job runs by kind and outcome, as the queue treats them', async () => {
    const metrics = new Metrics();
    const inner = handlerQueue();
    const queue = observeJobs(inner, metrics, noDb);
    let seen: Job | undefined;
    queue.work(
      'transcription.webhook',
      async (job) => {
        seen = currentJob();
        if (job.payload === 'permanent') throw new PermanentJobError('no');
        if (job.payload === 'error') throw new Error('again');
      },
      { concurrency: 1 },
    );
    await inner.run('transcription.webhook', { payload: 'ok' });
    expect(seen?.payload).toBe('ok');
    await expect(inner.run('transcription.webhook', { payload: 'error', attempt: 1 })).rejects.toThrow('again');
    await expect(inner.run('transcription.webhook', { payload: 'error', attempt: 3 })).rejects.toThrow('again');
    await expect(inner.run('transcription.webhook', { payload: 'permanent' })).rejects.toThrow('no');
    const stopped = new AbortController();
    stopped.abort();
    await expect(inner.run('transcription.webhook', { payload: 'error', signal: stopped.signal })).rejects.toThrow('again');
    expect(currentJob()).toBeUndefined();
    await new Promise((r) => setImmediate(r));
    const text = await metrics.render();
    const count = (outcome: string) => sample(text, `parlance_job_duration_seconds_count{kind="webhook",outcome="${outcome}"}`);
    expect([count('completed'), count('retried'), count('failed'), count('interrupted')]).toEqual([1, 1, 2, 1]);
  });

  it('counts webhook attempts by outcome, "failed" for a retryable failure on the last attempt', async () => {
    const metrics = new Metrics();
    const inner = handlerQueue();
    const queue = observeJobs(inner, metrics, noDb);
    const answers = [
      { statusCode: 200, retryable: false },
      { statusCode: 503, retryable: true },
      { statusCode: 503, retryable: true },
      { statusCode: null, retryable: false, refused: true },
    ];
    const send = observeWebhooks(async () => answers.shift()!, metrics);
    queue.work(
      'transcription.webhook',
      async () => void (await send({ url: 'http://h/', body: {}, authHeaderName: null, authHeaderValue: null, messageId: 'm' })),
      { concurrency: 1 },
    );
    for (const attempt of [1, 1, 3, 1]) await inner.run('transcription.webhook', { attempt, maxAttempts: 3 });
    // An attempt cut short by a stop has no outcome.
    const stopped = new AbortController();
    stopped.abort();
    await send({ url: 'http://h/', body: {}, authHeaderName: null, authHeaderValue: null, messageId: 'm', signal: stopped.signal }).catch(() => undefined);
    const text = await metrics.render();
    for (const [outcome, n] of Object.entries({ delivered: 1, retried: 1, failed: 1, refused: 1 }))
      expect(sample(text, `parlance_webhook_deliveries_total{outcome="${outcome}"}`), outcome).toBe(n);
  });

  it('counts recorded audio seconds by usage kind; reports queued jobs by kind', async () => {
    const metrics = new Metrics();
    const inner: UsageMeter = {
      estimateNano: async () => 0,
      meter: async (input) => ({ input_audio_duration_ms: input.inputAudioMs ?? 0, output_audio_duration_ms: input.outputAudioMs ?? 0 }) as never,
    };
    const meter = countedMeter(inner, metrics);
    const base = {
      actor: { organizationId: 'o', projectId: 'p', apiKeyId: null, source: 'public_api' },
      requestId: 'r',
      clientReferenceId: null,
      model: 'm',
      startTime: new Date(),
    };
    await meter.meter({ ...base, kind: 'stt_async', inputAudioMs: 2500 });
    await meter.meter({ ...base, kind: 'stt_rt', inputAudioMs: 1000 });
    await meter.meter({ ...base, kind: 'tts', inputCharacters: 40, outputAudioMs: 1500 });
    metrics.queueDepth(handlerQueue());
    const text = await metrics.render();
    expect(sample(text, 'parlance_usage_audio_seconds_total{kind="stt_async"}')).toBe(2.5);
    expect(sample(text, 'parlance_usage_audio_seconds_total{kind="stt_rt"}')).toBe(1);
    expect(sample(text, 'parlance_usage_audio_seconds_total{kind="tts"}')).toBe(1.5);
    expect(sample(text, 'parlance_jobs_queued{kind="transcription"}')).toBe(3);
    expect(sample(text, 'parlance_jobs_queued{kind="webhook"}')).toBe(1);
    expect(sample(text, 'parlance_jobs_queued{kind="voice_preparation"}')).toBe(0);
  });

  it('leaves the queue gauge empty, without failing the scrape, when the queue does not answer', async () => {
    const metrics = new Metrics();
    metrics.queueDepth({ queuedCounts: () => Promise.reject(new Error('database gone')) });
    const text = await metrics.render();
    expect(text).toMatch(/# TYPE parlance_jobs_queued gauge/);
    expect(text).not.toMatch(/^parlance_jobs_queued\{/m);
    expect(text).toMatch(/process_cpu_seconds_total/);
  });

  it('counts the queue at most once per max age, for concurrent and later scrapes alike; a failed count is not kept', async () => {
    const metrics = new Metrics();
    let clock = 0;
    let counts = 0;
    let fail = false;
    metrics.queueDepth(
      {
        queuedCounts: async () => {
          counts++;
          if (fail) throw new Error('database gone');
          return { 'transcription.process': counts };
        },
      },
      { maxAgeMs: 5000, now: () => clock },
    );
    const depth = async () => sample(await metrics.render(), 'parlance_jobs_queued{kind="transcription"}');
    expect(await Promise.all([depth(), depth(), depth()])).toEqual([1, 1, 1]);
    clock = 4999;
    expect(await depth()).toBe(1);
    expect(counts).toBe(1);
    clock = 5000;
    expect(await depth()).toBe(2);
    clock = 10_000;
    fail = true;
    expect(await metrics.render()).not.toMatch(/^parlance_jobs_queued\{/m);
    fail = false;
    expect(await depth()).toBe(4); // the failure was not cached: the next scrape counts again
    expect(counts).toBe(4);
  });
});
