// Redaction and the profanity filter (Parlance extensions), end to end on flite speech recognised by the built-in
// engine: async transcriptions on SQLite and PostgreSQL (the record echoes the controls; the stored transcript, its
// tokens and its exports hold the labels, never the words), live sessions (final tokens labelled, no digits shown in
// non-final ones either), and bad input refused naming the field.
import path from 'node:path';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgDatabase, errorBody, makeSpeech, type Parlance, startParlance, streamRealtime, tempDir, transcribeFile } from '../harness.js';
import { execFileSync } from 'node:child_process';

const CARD = 'my card number is four one one one one one one one one one one one one one one one thank you';
const PHONE = 'call me at five five five one two three four you bastard';
const DIGIT_WORDS = /\b(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)\b|\d/i;

let work: string;
let card: string;
let phone: string;

beforeAll(async () => {
  work = tempDir('parlance-controls-');
  card = await makeSpeech(path.join(work, 'card.wav'), CARD, { padSeconds: 0.5 });
  phone = await makeSpeech(path.join(work, 'phone.wav'), PHONE, { padSeconds: 1 });
}, 60_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe.each(['sqlite', 'postgres'] as const)('async transcriptions on %s', (dialect) => {
  let s: Parlance;
  let drop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    const pg = dialect === 'postgres' ? await createPgDatabase() : undefined;
    drop = pg?.drop;
    s = await startParlance(pg ? { env: { DATABASE_URL: pg.url } } : {});
  }, 120_000);

  afterAll(async () => {
    await s?.stop();
    await drop?.();
  });

  it('redacts a spoken card number into one [PCI] token spanning it; the record echoes the controls', async () => {
    const plain = await transcribeFile(s, card, { model: 'stt-async-v4', enable_text_formatting: false }, 180_000);
    // The engine heard the digits (else the test would prove nothing).
    expect(plain.tokens.filter((t) => DIGIT_WORDS.test(t.text)).length).toBeGreaterThanOrEqual(13);

    const red = await transcribeFile(s, card, { model: 'stt-async-v4', enable_text_formatting: false, redact: ['pci'] }, 180_000);
    const labels = red.tokens.filter((t) => t.text.trim() === '[PCI]');
    expect(labels).toHaveLength(1);
    expect(red.tokens.filter((t) => DIGIT_WORDS.test(t.text))).toEqual([]);
    expect(red.text).toContain('[PCI]');
    // The label spans the digits it replaced: from the first digit word's start to the last one's end.
    const digits = plain.tokens.filter((t) => DIGIT_WORDS.test(t.text));
    expect(labels[0]!.start_ms).toBe(digits[0]!.start_ms);
    expect(labels[0]!.end_ms).toBe(digits.at(-1)!.end_ms);

    const record = (await (await s.request(`/v1/transcriptions/${red.id}`)).json()) as Record<string, unknown>;
    expect(record.redact).toEqual(['pci']);
    expect(record).not.toHaveProperty('profanity_filter');
    for (const format of ['srt', 'vtt', 'txt']) {
      const text = await (await s.request(`/v1/transcriptions/${red.id}/transcript?format=${format}`)).text();
      expect(text).toContain('[PCI]');
      expect(text).not.toMatch(/\bone one\b/i);
    }
  }, 400_000);

  it('phone numbers and profanity, with formatting on', async () => {
    const out = await transcribeFile(s, phone, { model: 'stt-async-v4', redact: ['phone', 'ssn'], profanity_filter: true }, 180_000);
    expect(out.text).toContain('[PHONE]');
    expect(out.text).toMatch(/\bb\*{6}(?!\w)/);
    expect(out.text).not.toMatch(/bastard/i);
    expect(out.tokens.filter((t) => DIGIT_WORDS.test(t.text))).toEqual([]);
  }, 200_000);
});

describe('live sessions and bad input', () => {
  let s: Parlance;

  beforeAll(async () => {
    s = await startParlance();
  }, 120_000);

  afterAll(async () => {
    await s?.stop();
  });

  it('labels final tokens and shows no digits in non-final ones', async () => {
    const pcm = execFileSync('ffmpeg', ['-nostdin', '-v', 'error', '-i', phone, '-f', 's16le', '-ar', '16000', '-ac', '1', '-']);
    const frames = await streamRealtime(s, pcm, { redact: ['phone'], profanity_filter: true, enable_text_formatting: false });
    const tokens = frames.flatMap((f) => f.tokens);
    expect(tokens.filter((t) => DIGIT_WORDS.test(t.text))).toEqual([]);
    const final = tokens
      .filter((t) => t.is_final)
      .map((t) => t.text)
      .join('');
    expect(final).toContain('[PHONE]');
    expect(final).not.toMatch(/bastard/i);
  }, 120_000);

  it('refuses an unknown kind, a repeated kind and a non-boolean filter, naming the field', async () => {
    for (const [body, location] of [
      [{ redact: ['pci', 'passport'] }, 'redact.1'],
      [{ redact: ['pci', 'pci'] }, 'redact'],
      [{ profanity_filter: 'yes' }, 'profanity_filter'],
    ] as const) {
      const res = await s.request('/v1/transcriptions', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'stt-async-v4', audio_url: 'https://example.com/a.wav', ...body }),
      });
      const err = await errorBody(res);
      expect(res.status).toBe(400);
      expect(err.error_type).toBe('invalid_request');
      expect(err.validation_errors.map((v) => v.location)).toContain(location);
    }
    const frames = await streamRealtime(s, Buffer.alloc(3200), { redact: ['passport'] });
    expect(frames.at(-1)).toMatchObject({ error_type: 'invalid_request', error_message: expect.stringContaining('redact.0') });
  }, 60_000);
});
