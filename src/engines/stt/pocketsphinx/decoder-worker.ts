// One pocketsphinx decoder on its own worker thread, as both pools use it: start-up (`ready`), messages in and out,
// and its death. The main thread only moves PCM into messages; all decoding happens in the workers.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { FromWorker, ToWorker, WorkerInit } from './messages.js';

/**
 * How to start the worker. From dist/ this module is decoder-worker.js and the worker is the compiled worker.js, run by plain
 * Node. When this module is itself a .ts file (vitest, or `node --import tsx`), the worker is worker.ts and the
 * thread needs a TypeScript loader: a tiny eval'd bootstrap loads it through tsx's `tsImport` (tsx is a
 * devDependency; dist never needs it). `--import tsx` in the worker's execArgv does not work on Node 20: its
 * module hooks do not reach the worker's own entry.
 */
export function workerEntry(moduleUrl: string = import.meta.url): { script: URL | string; eval: boolean } {
  const isTs = /\.[cm]?ts$/.test(new URL(moduleUrl).pathname);
  if (!isTs) return { script: new URL('./worker.js', moduleUrl), eval: false };
  const worker = new URL('./worker.ts', moduleUrl).href;
  const code = `import(${JSON.stringify(tsxEsmApi(moduleUrl))}).then((tsx) => tsx.tsImport(${JSON.stringify(worker)}, ${JSON.stringify(moduleUrl)}))`;
  return { script: code, eval: true };
}

/** URL of tsx's ESM API ("tsx/esm/api", import condition), read from tsx's own exports map. */
function tsxEsmApi(moduleUrl: string): string {
  const require = createRequire(moduleUrl);
  const manifestPath = require.resolve('tsx/package.json');
  const manifest = require(manifestPath) as { exports?: Record<string, { import?: { default?: string } } | string> };
  const entry = manifest.exports?.['./esm/api'];
  const relative = typeof entry === 'object' ? entry.import?.default : undefined;
  if (!relative) throw new Error('tsx does not export ./esm/api; cannot run the TypeScript worker');
  return pathToFileURL(join(dirname(manifestPath), relative)).href;
}

/** The live session a streaming worker serves (stream-pool.ts's SessionChannel): what its worker's death does to it. */
interface ServedSession {
  fail(err: Error): void;
}

export class DecoderWorker {
  readonly worker: Worker;
  readonly ready: Promise<number>;
  /** Where this worker's messages go (the pool for batch work, the session channel while streaming). */
  onMessage: ((msg: FromWorker) => void) | undefined;
  /** The live session on a streaming worker. */
  channel: ServedSession | undefined;
  started = false;
  dead = false;
  closing = false;
  retireTimer: NodeJS.Timeout | undefined;

  constructor(init: WorkerInit, onDeath: (w: DecoderWorker, err: Error) => void) {
    const entry = workerEntry();
    this.worker = new Worker(entry.script, { eval: entry.eval, workerData: init, execArgv: [] });
    this.ready = new Promise<number>((resolve, reject) => {
      const onMessage = (msg: FromWorker): void => {
        if (msg.type === 'ready') {
          this.worker.off('message', onMessage);
          this.started = true;
          resolve(msg.loadMs);
        } else if (msg.type === 'init_error') {
          this.worker.off('message', onMessage);
          reject(new Error(msg.message));
        }
      };
      this.worker.on('message', onMessage);
      this.worker.once('error', (err) => reject(new Error(`pocketsphinx worker failed to start: ${err.message}`)));
      this.worker.once('exit', (code) => reject(new Error(`pocketsphinx worker exited during start-up (code ${code})`)));
    });
    this.ready.catch(() => {}); // observed by the pool; avoid an unhandled rejection when nobody awaits it
    this.worker.on('message', (msg: FromWorker) => {
      if (msg.type !== 'ready' && msg.type !== 'init_error') this.onMessage?.(msg);
    });
    let lastError: Error | undefined;
    this.worker.on('error', (err) => {
      lastError = err;
    });
    this.worker.on('exit', (code) => {
      this.dead = true;
      if (this.retireTimer) clearTimeout(this.retireTimer);
      // Start-up failures are reported through `ready`; deaths during `close()` are expected.
      if (this.closing || !this.started) return;
      onDeath(this, lastError ?? new Error(`pocketsphinx worker exited unexpectedly (code ${code})`));
    });
  }

  post(msg: ToWorker, transfer?: ArrayBuffer[]): void {
    this.worker.postMessage(msg, transfer);
  }

  stop(): Promise<number> {
    this.closing = true;
    return this.worker.terminate();
  }
}
