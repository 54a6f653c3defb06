import { describe, expect, it } from 'vitest';
import { PauseJoiner } from './pauses.js';

const RATE = 1000;
/** s16le: `quiet` silent samples, `loud` loud ones, then `tail` silent ones. */
function pcm(quiet: number, loud: number, tail: number): Buffer {
  const b = Buffer.alloc((quiet + loud + tail) * 2);
  for (let i = quiet; i < quiet + loud; i++) b.writeInt16LE(8000, i * 2);
  return b;
}

describe('PauseJoiner', () => {
  it('makes a pause the requested silence, counting the silence at the end of the audio before it', () => {
    const j = new PauseJoiner(RATE);
    expect(j.join(pcm(50, 100, 200)).length / 2).toBe(350);
    // 700 ms asked, 200 ms already there.
    expect(j.join(Buffer.alloc(0), 0.7).length / 2).toBe(500);
    // The audio after a pause starts at its first sound.
    expect(j.join(pcm(120, 100, 30)).length / 2).toBe(130);
  });

  it('adds consecutive pauses, keeps an engine pause longer than the break, and leaves audio alone without breaks', () => {
    const j = new PauseJoiner(RATE);
    j.join(pcm(0, 100, 300));
    expect(j.join(Buffer.alloc(0), 0.1).length).toBe(0);
    expect(j.join(Buffer.alloc(0), 0.5).length / 2).toBe(300);
    const plain = new PauseJoiner(RATE);
    expect(plain.join(pcm(120, 100, 30)).length / 2).toBe(250);
    expect(plain.join(pcm(120, 100, 30)).length / 2).toBe(250);
  });

  it('keeps trimming after a pause through chunks that are all silence', () => {
    const j = new PauseJoiner(RATE);
    j.join(pcm(0, 10, 0));
    expect(j.join(Buffer.alloc(0), 0.2).length / 2).toBe(200);
    expect(j.join(pcm(40, 0, 0)).length).toBe(0);
    expect(j.join(pcm(40, 10, 0)).length / 2).toBe(10);
  });
});
