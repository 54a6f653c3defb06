import { describe, expect, it } from 'vitest';
import { FairScheduler } from './scheduler.js';

/** Run the scheduler against `workers` simulated decoders where every job takes one tick; returns dispatch order. */
function simulate(s: FairScheduler<string>, workers: number, ticks: number): string[][] {
  const rounds: string[][] = [];
  for (let t = 0; t < ticks; t++) {
    const running: { request: Parameters<FairScheduler<string>['finished']>[0]; job: string }[] = [];
    for (let w = 0; w < workers; w++) {
      const next = s.next();
      if (next) running.push(next);
    }
    rounds.push(running.map((r) => r.job));
    for (const r of running) s.finished(r.request);
  }
  return rounds;
}

describe('FairScheduler', () => {
  it('serves requests in rotation, one job each per turn, each in FIFO order', () => {
    const s = new FairScheduler<string>();
    const a = s.register();
    const b = s.register();
    const c = s.register();
    for (let i = 0; i < 3; i++) {
      s.enqueue(a, `a${i}`);
      s.enqueue(b, `b${i}`);
    }
    s.enqueue(c, 'c0');
    expect(simulate(s, 1, 8).flat()).toEqual(['a0', 'b0', 'c0', 'a1', 'b1', 'a2', 'b2']);
  });

  it('gives the next free decoder to a newcomer, ahead of requests that are already being served', () => {
    const s = new FairScheduler<string>();
    const long1 = s.register();
    const long2 = s.register();
    for (let i = 0; i < 10; i++) {
      s.enqueue(long1, `x${i}`);
      s.enqueue(long2, `y${i}`);
    }
    // Both decoders busy with the long requests.
    const first = s.next()!;
    const second = s.next()!;
    expect([first.job, second.job]).toEqual(['x0', 'y0']);
    const short = s.register();
    s.enqueue(short, 's0');
    s.finished(first.request);
    expect(s.next()!.job).toBe('s0');
    // Then the rotation goes on.
    expect(s.next()!.job).toBe('x1');
  });

  it('prefers the request with fewer jobs running, and respects the per-request limit', () => {
    const s = new FairScheduler<string>(2);
    const a = s.register();
    for (let i = 0; i < 5; i++) s.enqueue(a, `a${i}`);
    // A lone request may use two decoders, not three.
    expect([s.next()?.job, s.next()?.job, s.next()?.job]).toEqual(['a0', 'a1', undefined]);
    const b = s.register();
    s.enqueue(b, 'b0');
    s.enqueue(b, 'b1');
    expect(s.next()!.job).toBe('b0'); // b has nothing running, a has two
    expect(s.next()!.job).toBe('b1'); // b has one running, a two (its limit)
    expect(s.next()).toBeUndefined();
    expect(s.stats()).toMatchObject({ requests: 2, active: 2, waiting: 0, queued: 3, running: 4 });
  });

  it('works as a strict one-job-per-request scheduler with a limit of 1', () => {
    const s = new FairScheduler<string>(1);
    const a = s.register();
    const b = s.register();
    for (let i = 0; i < 3; i++) s.enqueue(a, `a${i}`);
    s.enqueue(b, 'b0');
    expect(simulate(s, 3, 3)).toEqual([['a0', 'b0'], ['a1'], ['a2']]);
  });

  it('reports queue positions while a request waits for its first decoder, then 0', () => {
    const s = new FairScheduler<string>();
    const seen = new Map<string, number[]>();
    const reg = (name: string) => s.register((p) => seen.set(name, [...(seen.get(name) ?? []), p]));
    const busy = reg('busy');
    s.enqueue(busy, 'busy0');
    s.enqueue(busy, 'busy1');
    const running = s.next()!; // the only decoder
    s.publishPositions();
    const w1 = reg('w1');
    const w2 = reg('w2');
    const idle = reg('idle'); // no job yet: no position
    s.enqueue(w1, 'w1-0');
    s.enqueue(w2, 'w2-0');
    s.publishPositions();
    expect(seen.get('w1')).toEqual([1]);
    expect(seen.get('w2')).toEqual([2]);
    s.finished(running.request);
    expect(s.next()!.job).toBe('w1-0');
    s.publishPositions();
    expect(seen.get('w1')).toEqual([1, 0]);
    expect(seen.get('w2')).toEqual([2, 1]);
    expect(seen.get('busy')).toEqual([0]);
    expect(seen.has('idle')).toBe(false);
    expect(s.stats().perRequest.find((r) => r.id === w2.id)).toMatchObject({ queued: 1, running: 0, position: 1 });
    // Removing a request drops its queued jobs.
    expect(s.remove(busy)).toEqual(['busy1']);
    expect(s.remove(idle)).toEqual([]);
    expect(s.stats().requests).toBe(2);
  });
});
