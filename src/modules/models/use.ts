// Which models are in use on this node: every transcription and live session of an STT model counts from its start
// to its end (the catalog's recognizers report them). A removed model is unloaded once its last use ends; a model
// nobody used for PARLANCE_MODEL_IDLE_UNLOAD_SECONDS is unloaded (live.ts).
export class ModelUse {
  private readonly active = new Map<string, number>();
  private readonly last = new Map<string, number>();
  private readonly idle = new Map<string, (() => void)[]>();

  /** A use of `model` begins; the function returned ends it (once, however often it is called). */
  begin(model: string): () => void {
    this.active.set(model, (this.active.get(model) ?? 0) + 1);
    this.last.set(model, Date.now());
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.last.set(model, Date.now());
      const left = (this.active.get(model) ?? 1) - 1;
      if (left > 0) return void this.active.set(model, left);
      this.active.delete(model);
      for (const wake of this.idle.get(model)?.splice(0) ?? []) wake();
    };
  }

  /** The model was asked for (a request opening it): its idle time starts again. */
  touch(model: string): void {
    this.last.set(model, Date.now());
  }

  inUse(model: string): boolean {
    return this.active.has(model);
  }

  /** When a use of the model last began or ended (ms since the epoch); undefined: never on this node. */
  lastUsed(model: string): number | undefined {
    return this.last.get(model);
  }

  /** Resolves once no use of the model is running (at once when none is). */
  whenIdle(model: string): Promise<void> {
    if (!this.active.has(model)) return Promise.resolve();
    return new Promise((resolve) => {
      const waiting = this.idle.get(model) ?? [];
      waiting.push(resolve);
      this.idle.set(model, waiting);
    });
  }

  forget(model: string): void {
    this.last.delete(model);
  }
}
