// How a download shows on stderr (never stdout, which carries the command's result): on a terminal one line redrawn
// in place with a bar, percent, MB and rate; otherwise (a log, CI) a plain line every few seconds, so that a
// quick download prints nothing and a failure stays one line.
import type { DownloadProgress } from './download.js';

export type ProgressMode = 'bar' | 'lines' | 'none';

export interface ProgressOut {
  write(s: string): unknown;
  columns?: number;
}

const REDRAW_MS = 100;

export class StderrProgress implements DownloadProgress {
  private total: number | undefined;
  private from = 0;
  private received = 0;
  private startedAt = 0;
  private lastShown = 0;
  private drawn = false;

  constructor(
    private readonly label: string,
    private readonly mode: ProgressMode,
    /** Seconds between plain lines. */
    private readonly intervalS = 5,
    private readonly out: ProgressOut = process.stderr,
  ) {}

  start(total: number | undefined, from: number): void {
    this.total = total;
    this.from = this.received = from;
    this.startedAt = this.lastShown = Date.now();
    if (this.mode === 'bar') this.draw();
  }

  update(received: number): void {
    this.received = received;
    const now = Date.now();
    if (this.mode === 'bar' && now - this.lastShown >= REDRAW_MS) this.draw();
    else if (this.mode === 'lines' && now - this.lastShown >= this.intervalS * 1000) {
      this.lastShown = now;
      this.out.write(`downloading ${this.label}: ${this.figures()}\n`);
    }
  }

  end(ok: boolean): void {
    if (this.mode !== 'bar' || !this.drawn) return;
    // A failure leaves its one line alone on the terminal.
    if (ok) this.draw();
    this.out.write(ok ? '\n' : '\r\x1b[K');
  }

  private draw(): void {
    this.lastShown = Date.now();
    const width = 20;
    const bar = this.total ? `[${'#'.repeat(Math.floor((width * this.received) / this.total)).padEnd(width, '-')}] ` : '';
    let line = `${this.label} ${bar}${this.figures()}`;
    // A terminal of unknown width (0 under script(1)) gets 80 columns.
    const columns = this.out.columns || 80;
    if (line.length >= columns) line = `…${line.slice(line.length - columns + 2)}`;
    this.out.write(`\r${line}\x1b[K`);
    this.drawn = true;
  }

  /** "45% 53.1 of 118.1 MB, 12.3 MB/s" (what is known of it). */
  private figures(): string {
    const mb = (n: number) => (n / 1e6).toFixed(1);
    const seconds = (Date.now() - this.startedAt) / 1000;
    const rate = seconds > 0.2 ? `, ${mb((this.received - this.from) / seconds)} MB/s` : '';
    const resumed = this.from ? ` (resumed at ${mb(this.from)} MB)` : '';
    if (!this.total) return `${mb(this.received)} MB${rate}${resumed}`;
    return `${Math.floor((100 * this.received) / this.total)}% ${mb(this.received)} of ${mb(this.total)} MB${rate}${resumed}`;
  }
}

/** The bar on a terminal, plain lines elsewhere, nothing for --json. */
export function progressMode(json: boolean | undefined, stream: { isTTY?: boolean } = process.stderr): ProgressMode {
  if (json) return 'none';
  return stream.isTTY ? 'bar' : 'lines';
}
