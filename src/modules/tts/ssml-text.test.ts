import { describe, expect, it } from 'vitest';
import { ApiError } from '../../wire/api-error.js';
import { checkSsmlText, liveSsmlText, ssmlText } from './ssml-text.js';
import { LiveText } from './speech-text.js';

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError && err.type === 'invalid_request') return err.message;
    throw err;
  }
  throw new Error('accepted');
}

describe('checkSsmlText', () => {
  it('parses a document and counts its spoken text', () => {
    const doc = checkSsmlText('<speak><sub alias="Doctor">Dr.</sub> Who <break time="1s"/></speak>', 20);
    expect(doc.text).toBe('Doctor Who');
    expect(ssmlText(doc).characters()).toBe(10);
  });

  it('refuses invalid SSML at text, naming the position, and caps spoken text and markup apart', () => {
    expect(refusal(() => checkSsmlText('<speak>\n<foo/></speak>', 100))).toBe(
      'Invalid request: text: is not valid SSML at line 2, column 1: unknown element <foo> (supported: speak, break, prosody, say-as, sub, phoneme)',
    );
    expect(refusal(() => checkSsmlText(42, 100))).toMatch(/text: must be string/);
    expect(refusal(() => checkSsmlText('<speak><break time="1s"/></speak>', 100))).toMatch(/must contain something to speak/);
    // 10 spoken characters: within 12, in a document of 47 (at most 4 times 12).
    const marked = '<speak><sub alias="Doctor">Dr</sub> Who</speak>';
    expect(marked.length).toBe(47);
    expect(checkSsmlText(marked, 12).text).toBe('Doctor Who');
    expect(refusal(() => checkSsmlText('<speak>Doctor Who?</speak>', 10))).toMatch(/10 characters of spoken text/);
    expect(refusal(() => checkSsmlText(`<speak>a${' '.repeat(40)}</speak>`, 10))).toMatch(/40 characters of SSML, markup included/);
  });
});

describe('liveSsmlText', () => {
  it('parses the stream text once it ends and meters nothing before', async () => {
    const live = new LiveText(400);
    const text = liveSsmlText(live, 100);
    live.push('<speak>Hello <bre');
    live.push('ak time="1s"/>world</speak>');
    expect(text.characters()).toBe(0);
    live.end();
    const source = text.source as { ssml(): Promise<{ text: string }> };
    expect((await source.ssml()).text).toBe('Hello world');
    expect(text.characters()).toBe(11);
  });
});
