import { describe, expect, it } from 'vitest';
import { WorkGate } from './work-gate.js';

function deferred(): { promise: Promise<void>; resolve(): void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('WorkGate', () => {
  it('runs at most `slots` tasks at once and starts the waiting ones in arrival order', async () => {
    const gate = new WorkGate(2);
    const started: number[] = [];
    const gates = [0, 1, 2, 3].map(() => deferred());
    const runs = gates.map((d, i) =>
      gate.run(async () => {
        started.push(i);
        await d.promise;
        return i;
      }),
    );
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    expect(gate.running).toBe(2);
    expect(gate.waiting).toBe(2);
    gates[1]!.resolve();
    await runs[1];
    await Promise.resolve();
    expect(started).toEqual([0, 1, 2]);
    gates[0]!.resolve();
    gates[2]!.resolve();
    gates[3]!.resolve();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3]);
    expect(started).toEqual([0, 1, 2, 3]);
    expect(gate.running).toBe(0);
    expect(gate.waiting).toBe(0);
  });

  it('starts waiting tasks of a higher priority first, each priority in arrival order', async () => {
    const gate = new WorkGate(1);
    const hold = deferred();
    const started: string[] = [];
    const task = (name: string) => async () => void started.push(name);
    const first = gate.run(() => hold.promise);
    const runs = [gate.run(task('file a')), gate.run(task('live a'), undefined, 1), gate.run(task('file b')), gate.run(task('live b'), undefined, 1)];
    hold.resolve();
    await Promise.all([first, ...runs]);
    expect(started).toEqual(['live a', 'live b', 'file a', 'file b']);
  });

  it('frees the slot when a task fails, and an abort while waiting leaves the queue', async () => {
    const gate = new WorkGate(1);
    const hold = deferred();
    const first = gate.run(() => hold.promise);
    const ac = new AbortController();
    const aborted = gate.run(async () => 'never', ac.signal);
    const after = gate.run(async () => 'ran');
    expect(gate.waiting).toBe(2);
    ac.abort(new Error('gone'));
    await expect(aborted).rejects.toThrow('gone');
    expect(gate.waiting).toBe(1);
    hold.resolve();
    await first;
    expect(await after).toBe('ran');
    await expect(gate.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await gate.run(async () => 'next')).toBe('next');
  });

  it('estimates Retry-After from recent run times and the queue length', async () => {
    const gate = new WorkGate(1);
    expect(gate.retryAfterSeconds()).toBe(1);
    const started = performance.now();
    await gate.run(() => new Promise((r) => setTimeout(r, 50)));
    const ranMs = performance.now() - started; // what the gate measured of that run, and a little more
    const hold = deferred();
    const runs = [gate.run(() => hold.promise), ...Array.from({ length: 40 }, () => gate.run(async () => undefined))];
    // 41 waiting-or-running tasks on one slot, each as long as the one run so far (50 ms, or more on a busy machine):
    // about 2 s or more.
    expect(gate.retryAfterSeconds()).toBeGreaterThanOrEqual(2);
    expect(gate.retryAfterSeconds()).toBeLessThanOrEqual(Math.ceil((41 * ranMs) / 1000));
    hold.resolve();
    await Promise.all(runs);
  });
});
