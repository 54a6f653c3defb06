import { describe, expect, it } from 'vitest';
import { PcmHistory } from './pcm-history.js';

const run = (from: number, n: number) => Int16Array.from({ length: n }, (_, i) => from + i);

describe('PcmHistory', () => {
  it('cuts a span across chunks by sample index, and zero where nothing is held', () => {
    const h = new PcmHistory();
    h.push(run(0, 4));
    h.push(run(4, 4));
    expect([...h.slice(2, 6)]).toEqual([2, 3, 4, 5]);
    expect(h.end).toBe(8);
    h.drop(3);
    expect(h.start).toBe(3);
    expect([...h.slice(1, 5)]).toEqual([0, 0, 3, 4]);
    expect([...h.slice(7, 10)]).toEqual([7, 0, 0]);
  });

  it('drops whole and partial chunks, and keeps everything for a drop before its start', () => {
    const h = new PcmHistory();
    h.push(run(0, 4));
    h.push(run(4, 4));
    h.drop(-5);
    expect(h.start).toBe(0);
    h.drop(4);
    expect(h.start).toBe(4);
    h.drop(8);
    expect(h.start).toBe(8);
    expect([...h.slice(0, 8)]).toEqual(new Array(8).fill(0));
  });
});
