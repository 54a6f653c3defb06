import { describe, expect, it } from 'vitest';
import { segments } from './text.js';

async function all(input: AsyncIterable<string> | string): Promise<string[]> {
  const out: string[] = [];
  for await (const s of segments(input)) out.push(s);
  return out;
}

async function* chunks(...parts: string[]): AsyncGenerator<string> {
  for (const p of parts) yield p;
}

describe('segments', () => {
  it('splits sentences and keeps the remainder', async () => {
    expect(await all('Hello world. How are you? Fine! And the rest')).toEqual(['Hello world.', 'How are you?', 'Fine!', 'And the rest']);
  });

  it('joins streamed chunks and waits for the whitespace after a sentence end', async () => {
    expect(await all(chunks('Hel', 'lo there.', ' Next one', ' ends here.', ''))).toEqual(['Hello there.', 'Next one ends here.']);
  });

  it('does not split decimals and drops segments with nothing to speak', async () => {
    expect(await all('Pi is 3.14 roughly. ... !')).toEqual(['Pi is 3.14 roughly.']);
  });

  it('cuts overlong runs at a space', async () => {
    const long = Array.from({ length: 100 }, (_, i) => `word${i}`).join(' ');
    const segs = await all(long);
    expect(segs.length).toBeGreaterThan(1);
    for (const s of segs) expect(s.length).toBeLessThanOrEqual(300);
    expect(segs.join(' ')).toBe(long);
  });
});
