// One worker thread that answers id-tagged requests, for work that must stay off the event loop (per-sample audio,
// ONNX sessions, clustering). The client side (WorkerLane) starts the thread on first use at its priority, keeps the
// process alive only while a call is in progress, and fails every pending call if the thread dies (the next call
// starts a new one). The thread side is serveLane(). Running from TypeScript sources (tests importing modules
// directly) there is no compiled worker file: available() is then false and callers compute inline.
import { existsSync } from 'node:fs';
import { parentPort, Worker, workerData } from 'node:worker_threads';
import { lowerThreadPriority } from './priority.js';

export type LaneReply<Res> = { id: number; result: Res } | { id: number; error: string };

interface LaneData {
  /** Nice value the thread takes on start (0 or absent: the server's own priority). */
  nice?: number;
}

export class WorkerLane<Req extends object, Res> {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve(r: Res): void; reject(e: Error): void }>();

  constructor(
    /** The compiled worker's path. */
    private readonly file: string,
    private readonly options: LaneData = {},
  ) {}

  private get(): Worker | undefined {
    if (this.worker) return this.worker;
    if (!existsSync(this.file)) return undefined;
    // Compiled JavaScript: none of the parent's flags (--input-type, a TypeScript loader) apply to it.
    const w = new Worker(this.file, { execArgv: [], workerData: { nice: this.options.nice } satisfies LaneData });
    w.on('message', (m: LaneReply<Res>) => {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      // An idle thread never keeps the process alive (unref'd after the listeners, which would ref it again).
      if (this.pending.size === 0) w.unref();
      if (!p) return;
      if ('result' in m) p.resolve(m.result);
      else p.reject(new Error(m.error));
    });
    const failAll = (err: Error) => {
      if (this.worker === w) this.worker = undefined;
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    w.on('error', failAll);
    w.on('exit', (code) => failAll(new Error(`worker thread exited with ${code}`)));
    w.unref();
    this.worker = w;
    return w;
  }

  /** False without a compiled worker (sources run by tsx): callers compute inline. */
  available(): boolean {
    return this.get() !== undefined;
  }

  call(req: Req): Promise<Res> {
    const w = this.get();
    if (!w) return Promise.reject(new Error('no worker thread'));
    const id = this.nextId++;
    // A call in progress keeps the process alive until its answer.
    w.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      w.postMessage({ ...req, id });
    });
  }

  /** Stop the thread (pending calls fail). */
  async stop(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    await w?.terminate();
  }
}

/** The thread side: take the lane's priority, then answer each request with its result or its error's message. */
export function serveLane<Req extends { id: number }, Res>(handle: (req: Req) => Promise<Res> | Res): void {
  const { nice } = (workerData ?? {}) as LaneData;
  if (nice) lowerThreadPriority(nice);
  const answer = async (req: Req) => {
    let reply: LaneReply<Res>;
    try {
      reply = { id: req.id, result: await handle(req) };
    } catch (err) {
      reply = { id: req.id, error: err instanceof Error ? err.message : String(err) };
    }
    // Copied, not transferred: small Buffers share Node's allocation pool, which a transfer would detach.
    parentPort!.postMessage(reply);
  };
  // Requests are answered as they come, each in its own turn (handle's errors are part of the reply).
  parentPort!.on('message', (req: Req) => void answer(req));
}
