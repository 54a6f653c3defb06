// Apertium (rule-based MT, Debian packages apertium-<pair>) as a translation engine.
//
// - Pairs are discovered at start-up with `apertium -d <dataDir> -l` (the modes installed under <dataDir>/modes), so
//   an operator adds a pair by installing its Debian package and restarting. Plain `<src>-<tgt>` modes only;
//   variants (`spa-eng_US`, `en-eo-bytecode`) are skipped. ISO 639-3 mode names map to ISO 639-1 codes.
// - One call runs `apertium -u -f line <mode>`: line format keeps one output line per input line, so a batch of
//   segments (a whole async transcript) costs one process. The pipeline's null-flush mode does not work with
//   Debian's apertium 3.8 text deformatters, so there is no long-lived server process. Start-up (loading the
//   transducers) is most of the cost (~0.1–0.5 s against a few ms per sentence), so after a mode is used one
//   spare process is spawned and left waiting on stdin, fully loaded; it is reaped after `idleMs` without use.
// - Children run in their own process group (the apertium script is a shell pipeline): abort, timeout and close
//   kill the whole group. At most `maxProcesses` translations run at once; others wait their turn.
import { execFile } from 'node:child_process';
import { type Child, spawnChild } from '../../../lib/spawner/spawn-child.js';
import { promisify } from 'node:util';
import { type TranslateOptions, type TranslationEngine, TranslationError, type TranslationPair } from '../interface.js';

const execFileAsync = promisify(execFile);

/** ISO 639-3 (and other 3-letter) codes apertium mode names use → the ISO 639-1 codes the API speaks. */
const ISO_639_1: Record<string, string> = {
  afr: 'af',
  arg: 'an',
  bel: 'be',
  bre: 'br',
  bul: 'bg',
  cat: 'ca',
  dan: 'da',
  deu: 'de',
  eng: 'en',
  epo: 'eo',
  eus: 'eu',
  fra: 'fr',
  glg: 'gl',
  hbs: 'sh',
  hin: 'hi',
  ind: 'id',
  isl: 'is',
  ita: 'it',
  mkd: 'mk',
  nld: 'nl',
  nno: 'nn',
  nob: 'nb',
  nor: 'no',
  oci: 'oc',
  pol: 'pl',
  por: 'pt',
  ron: 'ro',
  rus: 'ru',
  slv: 'sl',
  spa: 'es',
  srd: 'sc',
  swe: 'sv',
  ukr: 'uk',
  urd: 'ur',
  zlm: 'ms',
};

export const toIso6391 = (code: string): string => ISO_639_1[code] ?? code;

const PLAIN_MODE = /^([a-z]{2,3})-([a-z]{2,3})$/;

/** Translation directions in `apertium -l` output: `{source, target, mode}`, first mode wins per direction. */
export function parseModes(listing: string): (TranslationPair & { mode: string })[] {
  const seen = new Set<string>();
  const out: (TranslationPair & { mode: string })[] = [];
  for (const line of listing.split('\n')) {
    const mode = line.trim();
    const m = PLAIN_MODE.exec(mode);
    if (!m) continue;
    const source = toIso6391(m[1]!);
    const target = toIso6391(m[2]!);
    if (source === target || seen.has(`${source}:${target}`)) continue;
    seen.add(`${source}:${target}`);
    out.push({ source, target, mode });
  }
  return out.sort((a, b) => a.source.localeCompare(b.source) || a.target.localeCompare(b.target));
}

/** Clean apertium's output: unknown/ungenerated word marks (`*`, `#`, `@`, `~`), doubled spaces. */
export function cleanOutput(line: string): string {
  return line
    .replace(/(^|\s)[*#@~]+(?=[\p{L}\p{N}])/gu, '$1')
    .replace(/\s+/g, ' ')
    .trim();
}

export interface ApertiumOptions {
  /** The apertium script (PATH lookup). */
  command?: string;
  /** Apertium data directory (holds `modes/`). */
  dataDir?: string;
  /** Translations running at once; more wait. */
  maxProcesses?: number;
  /** Keep a loaded spare process of a used mode this long; 0 = no spares (every call pays start-up). */
  idleMs?: number;
  /** Longest one call may take before its process is killed. */
  timeoutMs?: number;
}

interface Spare {
  child: Child;
  timer: NodeJS.Timeout;
}

function killGroup(child: Child): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  // Not known to have started yet: the kill waits for it (the group leader only).
  if (child.pid === undefined) return void child.kill('SIGKILL');
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

export class ApertiumEngine implements TranslationEngine {
  readonly id = 'apertium';
  private readonly modes = new Map<string, string>();
  private readonly spares = new Map<string, Spare>();
  private readonly running = new Set<Child>();
  private readonly waiting: (() => void)[] = [];
  private active = 0;
  private closed = false;
  /** Processes started and calls served by an already-loaded spare (for tests and metrics). */
  readonly stats = { spawned: 0, spareHits: 0 };
  private readonly command: string;
  private readonly dataDir: string;
  private readonly maxProcesses: number;
  private readonly idleMs: number;
  private readonly timeoutMs: number;

  private constructor(
    readonly pairs: readonly TranslationPair[],
    modes: readonly (TranslationPair & { mode: string })[],
    opts: ApertiumOptions,
  ) {
    for (const m of modes) this.modes.set(`${m.source}:${m.target}`, m.mode);
    this.command = opts.command ?? 'apertium';
    this.dataDir = opts.dataDir ?? '/usr/share/apertium';
    this.maxProcesses = Math.max(1, opts.maxProcesses ?? 2);
    this.idleMs = opts.idleMs ?? 120_000;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
  }

  /** Discover the installed pairs; an engine with no pairs when apertium or its data is missing. */
  static async create(opts: ApertiumOptions = {}): Promise<ApertiumEngine> {
    let listing = '';
    try {
      listing = (await execFileAsync(opts.command ?? 'apertium', ['-d', opts.dataDir ?? '/usr/share/apertium', '-l'], { timeout: 10_000 })).stdout;
    } catch {
      // apertium not installed, or no modes directory: translation is simply unavailable.
    }
    const modes = parseModes(listing);
    return new ApertiumEngine(
      modes.map(({ source, target }) => ({ source, target })),
      modes,
      opts,
    );
  }

  /** The mode serving a direction, or undefined. */
  modeOf(source: string, target: string): string | undefined {
    return this.modes.get(`${source}:${target}`);
  }

  async translate(source: string, target: string, segments: readonly string[], options: TranslateOptions = {}): Promise<string[]> {
    const mode = this.modeOf(source, target);
    if (!mode) throw new TranslationError(`apertium has no ${source}-${target} mode installed`);
    if (segments.length === 0) return [];
    // One segment per line: line breaks inside a segment would shift every later line.
    const input =
      segments
        .map((s) =>
          s
            .replace(/[\r\n]+/g, ' ')
            .replaceAll('\0', ' ')
            .trim(),
        )
        .join('\n') + '\n';
    const output = await this.run(mode, input, options.signal);
    const lines = output.replace(/\n$/, '').split('\n');
    if (lines.length !== segments.length) throw new TranslationError(`apertium ${mode} returned ${lines.length} lines for ${segments.length} segments`);
    return lines.map(cleanOutput);
  }

  private spawnMode(mode: string): Child {
    // Node's stdin "pipe" is a socket, which the apertium script cannot open as /dev/stdin: `cat` turns it into a pipe.
    const child = spawnChild('/bin/sh', ['-c', 'cat | "$0" "$@"', this.command, '-d', this.dataDir, '-u', '-f', 'line', mode], {
      detached: true,
      env: { ...process.env, LC_ALL: 'C.UTF-8' },
    });
    child.on('error', () => undefined);
    child.stdin.on('error', () => undefined);
    this.stats.spawned++;
    return child;
  }

  /** A loaded spare for `mode` if one is alive, else a fresh process; then prepare the next spare. */
  private takeProcess(mode: string): Child {
    const spare = this.spares.get(mode);
    this.spares.delete(mode);
    if (spare) clearTimeout(spare.timer);
    const child = spare && spare.child.exitCode === null && spare.child.signalCode === null ? spare.child : this.spawnMode(mode);
    if (spare && child !== spare.child) killGroup(spare.child);
    if (spare && child === spare.child) this.stats.spareHits++;
    this.spawnSpare(mode);
    return child;
  }

  private spawnSpare(mode: string): void {
    if (this.idleMs <= 0 || this.closed) return;
    const next = this.spawnMode(mode);
    const timer = setTimeout(() => {
      if (this.spares.get(mode)?.child === next) this.spares.delete(mode);
      killGroup(next);
    }, this.idleMs);
    timer.unref();
    next.unref();
    this.spares.set(mode, { child: next, timer });
  }

  /** Have a loaded spare of the direction's mode ready (restarting its idle clock), so the first call is fast too. */
  prepare(source: string, target: string): void {
    const mode = this.modeOf(source, target);
    if (!mode || this.closed || this.idleMs <= 0) return;
    const spare = this.spares.get(mode);
    if (spare && spare.child.exitCode === null && spare.child.signalCode === null) {
      spare.timer.refresh();
      return;
    }
    if (spare) clearTimeout(spare.timer);
    this.spawnSpare(mode);
  }

  private async acquire(signal?: AbortSignal): Promise<void> {
    if (this.active < this.maxProcesses) {
      this.active++;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const go = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(go);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(go);
    });
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }

  private async run(mode: string, input: string, signal?: AbortSignal): Promise<string> {
    if (this.closed) throw new TranslationError('the translation engine is shut down');
    signal?.throwIfAborted();
    await this.acquire(signal);
    try {
      if (this.closed) throw new TranslationError('the translation engine is shut down');
      const child = this.takeProcess(mode);
      this.running.add(child);
      const out: Buffer[] = [];
      let stderr = '';
      child.stdout!.on('data', (d: Buffer) => out.push(d));
      child.stderr!.setEncoding('utf8').on('data', (d: string) => {
        if (stderr.length < 2048) stderr += d;
      });
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup(child);
      }, this.timeoutMs);
      const onAbort = () => killGroup(child);
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        const code = await new Promise<number | null>((resolve, reject) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
          child.once('close', (c) => resolve(c));
          child.once('error', reject);
          child.stdin!.end(input);
        });
        signal?.throwIfAborted();
        if (timedOut) throw new TranslationError(`apertium ${mode} took longer than ${this.timeoutMs} ms`);
        if (code !== 0) throw new TranslationError(`apertium ${mode} exited with ${code}: ${stderr.trim().slice(0, 300)}`);
        return Buffer.concat(out).toString('utf8');
      } catch (err) {
        if (err instanceof TranslationError || signal?.aborted) throw err;
        throw new TranslationError(`apertium ${mode} failed: ${(err as Error).message}`, { cause: err });
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.running.delete(child);
      }
    } finally {
      this.release();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const { child, timer } of this.spares.values()) {
      clearTimeout(timer);
      killGroup(child);
    }
    this.spares.clear();
    for (const child of this.running) killGroup(child);
  }
}
