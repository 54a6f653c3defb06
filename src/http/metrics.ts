// Prometheus metrics of one node (prom-client): the process's defaults (CPU, memory, event-loop delay), HTTP
// requests by route and status with latency histograms, and gauges the services report through read callbacks.
// Served at GET /metrics; with PARLANCE_METRICS_TOKEN set, only to `Authorization: Bearer <token>`.
import { timingSafeEqual } from 'node:crypto';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export class Metrics {
  readonly registry = new Registry();
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  readonly refusals: Counter<'kind'>;
  readonly finalTokenLag: Histogram;
  readonly secondPass: Counter<'outcome'>;

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

  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** Whether `authorization` carries `token` (no token configured: everyone may read). */
export function metricsAuthorized(token: string, authorization: string | undefined): boolean {
  if (!token) return true;
  const given = Buffer.from(/^Bearer (.+)$/i.exec(authorization ?? '')?.[1] ?? '');
  const want = Buffer.from(token);
  return given.length === want.length && timingSafeEqual(given, want);
}
