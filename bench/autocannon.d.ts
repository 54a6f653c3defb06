// Minimal typings for the parts of autocannon (v8, no bundled types) that the benchmarks use.
declare module 'autocannon' {
  interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    connections?: number;
    pipelining?: number;
    /** Seconds. */
    duration?: number;
    amount?: number;
    /** Seconds before a request counts as timed out. */
    timeout?: number;
    title?: string;
  }

  /** Latency figures are milliseconds; keys are p<percentile> with '.' written as '_' (p97_5, p99_9). */
  interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total?: number;
    p50: number;
    p90: number;
    p97_5: number;
    p99: number;
    p99_9: number;
    [key: string]: number | undefined;
  }

  interface Result {
    title?: string;
    url: string;
    connections: number;
    pipelining: number;
    /** Seconds actually run. */
    duration: number;
    start: Date;
    finish: Date;
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    resets: number;
    '1xx': number;
    '2xx': number;
    '3xx': number;
    '4xx': number;
    '5xx': number;
    statusCodeStats: Record<string, { count: number }>;
    latency: Histogram & { totalCount: number };
    requests: Histogram & { sent: number };
    throughput: Histogram;
  }

  interface Instance extends PromiseLike<Result> {
    stop(): void;
  }

  function autocannon(opts: Options): Instance;
  export default autocannon;
}
