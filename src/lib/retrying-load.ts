// A resource loaded on first use and shared by every later use (a model on its worker threads): a load that fails is
// forgotten, so the next use tries again (the files may have been fixed meanwhile) instead of failing for good.
export class RetryingLoad<T> {
  private current: Promise<T> | undefined;
  /** The load that succeeded, while it is the current one (take() ends that). */
  private done: Promise<T> | undefined;

  constructor(private readonly open: () => Promise<T>) {}

  /** Whether the resource is loaded now (not merely being loaded). */
  get loaded(): boolean {
    return this.done !== undefined && this.done === this.current;
  }

  /** The loaded resource, loading it now if no load is done or under way. */
  get(): Promise<T> {
    if (!this.current) {
      const p = this.open();
      this.current = p;
      p.then(
        () => {
          if (this.current === p) this.done = p;
        },
        () => {
          if (this.current === p) this.current = undefined;
        },
      );
    }
    return this.current;
  }

  /** Forget the resource (the next get() loads it again); resolves to it if it had loaded, for closing. */
  async take(): Promise<T | undefined> {
    const p = this.current;
    this.current = undefined;
    this.done = undefined;
    return p?.catch(() => undefined);
  }
}
