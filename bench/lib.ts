// Shared pieces of the benchmark suites: the build step, the server environment, machine facts,
// percentiles, process memory, autocannon runs, cleanup, the results table, and real recordings as 16 kHz PCM over a
// noise floor.
import { execFile, execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import { settingDefs } from '../src/config/settings.js';
import { noiseFloorSamples } from '../src/audio/noise-floor.js';

export const ROOT = path.resolve(import.meta.dirname, '..');
const execFileP = promisify(execFile);

/** One line of the results table. `met` is null for informational rows without a target. */
export interface Row {
  benchmark: string;
  result: string;
  target: string;
  met: boolean | null;
}

export interface SuiteOptions {
  /** Short smoke run: smaller sizes and durations. Its numbers are not comparable with a full run. */
  quick: boolean;
  /** The suite's own options: `--name=value` (or `--name`, value '') after the suite name. */
  args: Record<string, string>;
  cleanup: Cleanup;
  log(message: string): void;
}

export interface SuiteResult {
  rows: Row[];
  /** Every raw number behind the rows, written to the JSON results file. */
  raw: Record<string, unknown>;
}

export type Suite = (opts: SuiteOptions) => Promise<SuiteResult>;

/** LIFO stack of cleanup steps; each runs once, failures are reported and do not stop the others. */
export class Cleanup {
  private readonly steps: { name: string; fn: () => unknown }[] = [];

  add(name: string, fn: () => unknown): void {
    this.steps.push({ name, fn });
  }

  async run(): Promise<void> {
    while (this.steps.length) {
      const step = this.steps.pop()!;
      try {
        await step.fn();
      } catch (err) {
        console.error(`cleanup "${step.name}" failed: ${(err as Error).message}`);
      }
    }
  }
}

/** Compile src/ to dist/ the way test/global-setup.ts does: the server under test is the built CLI. */
export function buildDist(): void {
  execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
}

export function requireTools(tools: string[]): void {
  for (const tool of tools) {
    try {
      execFileSync(tool, ['-version'], { stdio: 'ignore' });
    } catch {
      throw new Error(`${tool} is not installed: run \`make setup\` first`);
    }
  }
}

/**
 * Environment for a benchmark server: warn-level logs, embedded SQLite, in-memory counters, no config
 * file, and every requests-per-minute limit disabled (each PARLANCE_RATE_*_PER_MIN setting = 0).
 */
export function benchServerEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = { PARLANCE_LOG_LEVEL: 'warn', PARLANCE_CONFIG: '', DATABASE_URL: '', REDIS_URL: '' };
  for (const def of Object.values(settingDefs)) if (/^PARLANCE_RATE_\w+_PER_MIN$/.test(def.env)) env[def.env] = '0';
  return { ...env, ...extra };
}

export function machineInfo(): Record<string, unknown> {
  const cpus = os.cpus();
  return {
    cpu_model: cpus[0]?.model ?? 'unknown',
    cpu_count: cpus.length,
    total_memory_bytes: os.totalmem(),
    total_memory_gib: round(os.totalmem() / 2 ** 30, 1),
    load_average_at_start: os.loadavg().map((n) => round(n, 2)),
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    node_version: process.version,
  };
}

export function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** Nearest-rank percentile of unsorted samples. */
export function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

export function summarize(samples: number[]): { count: number; min: number; mean: number; p50: number; p95: number; p99: number; max: number } {
  const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
  return {
    count: samples.length,
    min: round(Math.min(...samples), 3),
    mean: round(mean, 3),
    p50: round(percentile(samples, 50), 3),
    p95: round(percentile(samples, 95), 3),
    p99: round(percentile(samples, 99), 3),
    max: round(Math.max(...samples), 3),
  };
}

/** The pid of the `parlance serve` process whose command line names `dataDir` (Linux /proc). */
export function findServerPid(dataDir: string): number {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // exited meanwhile
    }
    if (argv.includes('serve') && argv.includes(dataDir)) found.push(Number(name));
  }
  if (found.length !== 1) throw new Error(`expected one server process for ${dataDir}, found ${found.length}`);
  return found[0]!;
}

/** VmRSS and VmHWM (peak resident set) of a process, in bytes, from /proc/<pid>/status. */
export function processMemory(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    if (!m) throw new Error(`no ${field} in /proc/${pid}/status`);
    return Number(m[1]) * 1024;
  };
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/** CPU time (user + system) a process has used so far, seconds, from /proc/<pid>/stat (clock ticks of 1/100 s). */
export function processCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export const MiB = 2 ** 20;
export const mib = (bytes: number): number => round(bytes / MiB, 1);

export interface LoadResult {
  url: string;
  connections: number;
  duration_s: number;
  requests_total: number;
  req_per_s_mean: number;
  req_per_s_stddev: number;
  latency_ms: { mean: number; p50: number; p90: number; p97_5: number; p99: number; max: number };
  status_codes: Record<string, number>;
  non_2xx: number;
  errors: number;
  timeouts: number;
  bytes_per_s_mean: number;
}

/** One autocannon run (in this process) with a bearer key; latencies are whole milliseconds. */
export async function load(opts: { url: string; apiKey?: string; connections: number; duration: number; pipelining?: number }): Promise<LoadResult> {
  const r = await autocannon({
    url: opts.url,
    connections: opts.connections,
    pipelining: opts.pipelining ?? 1,
    duration: opts.duration,
    timeout: 30,
    headers: opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {},
  });
  return {
    url: opts.url,
    connections: opts.connections,
    duration_s: r.duration,
    requests_total: r.requests.total ?? r['2xx'] + r.non2xx,
    req_per_s_mean: r.requests.mean,
    req_per_s_stddev: r.requests.stddev,
    latency_ms: { mean: r.latency.mean, p50: r.latency.p50, p90: r.latency.p90, p97_5: r.latency.p97_5, p99: r.latency.p99, max: r.latency.max },
    status_codes: Object.fromEntries(Object.entries(r.statusCodeStats).map(([code, s]) => [code, s.count])),
    non_2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    bytes_per_s_mean: r.throughput.mean,
  };
}

export function formatTable(rows: Row[]): string {
  const cells = rows.map((r) => [r.benchmark, r.result, r.target, r.met === null ? '—' : r.met ? 'yes' : '**no**']);
  const head = ['benchmark', 'result', 'target', 'met'];
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => `| ${c.map((s, i) => s.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.map(line)].join('\n');
}

/** Sentences from the Harvard sentence lists (IEEE 1969): phonetically balanced, public domain. */
export const HARVARD_SENTENCES: readonly string[] = [
  'the birch canoe slid on the smooth planks',
  'glue the sheet to the dark blue background',
  'it is easy to tell the depth of a well',
  'these days a chicken leg is a rare dish',
  'rice is often served in round bowls',
  'the juice of lemons makes fine punch',
  'the box was thrown beside the parked truck',
  'the hogs were fed chopped corn and garbage',
  'four hours of steady work faced us',
  'a large size in stockings is hard to sell',
];

/** An audio file decoded by ffmpeg to 16 kHz mono s16le. */
export async function pcm16k(file: string): Promise<Buffer> {
  const { stdout } = await execFileP('ffmpeg', ['-v', 'error', '-i', file, '-f', 's16le', '-ac', '1', '-ar', '16000', 'pipe:1'], {
    encoding: 'buffer',
    maxBuffer: 1 << 28,
  });
  return stdout;
}

/** Pink-ish noise at about -60 dBFS RMS (a microphone's floor) as 16 kHz s16le, deterministic for a seed. */
export function noiseFloor(ms: number, seed = 1): Buffer {
  const samples = noiseFloorSamples(ms, seed);
  return Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
}
