import { describe, expect, it } from 'vitest';
import { type RedactKind, redactWords } from './redact.js';
import { applyWordControls } from './word-controls.js';

/** Words 100 ms apart, each 80 ms long. */
const words = (text: string) => text.split(' ').map((w, i) => ({ text: w, start_ms: i * 100, end_ms: i * 100 + 80, confidence: 0.9 - i * 0.01, speaker: '1' }));

const redact = (text: string, ...kinds: RedactKind[]) =>
  redactWords(words(text), new Set(kinds))
    .map((t) => t.text)
    .join(' ');

describe('redactWords', () => {
  it('spoken card, SSN and phone digits become one labelled token each, spanning their words', () => {
    const card = 'my card is four one one one one one one one one one one one one one one one thanks';
    expect(redact(card, 'pci')).toBe('my card is [PCI] thanks');
    const [, , , label] = redactWords(words(card), new Set(['pci']));
    expect(label).toEqual({ text: '[PCI]', start_ms: 300, end_ms: 1880, confidence: expect.closeTo(0.72, 5), speaker: '1' });
    expect(redact('ssn one two three four five six seven eight nine ok', 'ssn')).toBe('ssn [SSN] ok');
    expect(redact('call five five five dash one two three four now', 'phone')).toBe('call [PHONE] now');
  });

  it('written numerals count as their spoken forms do', () => {
    expect(redact('card 4111 1111 1111 1111.', 'pci')).toBe('card [PCI].');
    expect(redact('SSN 123-45-6789, thanks', 'ssn')).toBe('SSN [SSN], thanks');
    expect(redact('Call (555) 123-4567.', 'phone')).toBe('Call [PHONE].');
  });

  it('numbers: any run of numerals or number words; the most specific requested kind wins', () => {
    expect(redact('I have twenty three cats and 2 dogs', 'numbers')).toBe('I have [NUMBER] cats and [NUMBER] dogs');
    expect(redact('call five five five one two three four', 'numbers', 'phone')).toBe('call [PHONE]');
    // A phone-length run is only a number when phone numbers are not asked for.
    expect(redact('call five five five one two three four', 'numbers')).toBe('call [NUMBER]');
    // A kind not asked for leaves its run alone.
    expect(redact('call five five five one two three four', 'pci')).toBe('call five five five one two three four');
  });

  it('emails, written and spoken', () => {
    expect(redact('mail jane.doe@example.com today', 'email')).toBe('mail [EMAIL] today');
    expect(redact('it is john dot smith at mail dot example dot com okay', 'email')).toBe('it is [EMAIL] okay');
    expect(redact('meet me at home dot', 'email')).toBe('meet me at home dot');
  });

  it('changes nothing without kinds or matches', () => {
    expect(redact('four one one one', ...[])).toBe('four one one one');
    expect(redact('hello world', 'pci', 'ssn', 'numbers', 'email', 'phone')).toBe('hello world');
  });

  it('keeps a leading space on the label (tokens joined as transcripts join them)', () => {
    const tokens = [
      { text: 'call', start_ms: 0, end_ms: 100, confidence: 1 },
      { text: ' 555-1234.', start_ms: 100, end_ms: 900, confidence: 0.8 },
    ];
    expect(redactWords(tokens, new Set(['phone'])).map((t) => t.text)).toEqual(['call', ' [PHONE].']);
  });
});

describe('applyWordControls', () => {
  const controls = (redact: RedactKind[], profanityFilter = false) => ({ redact, profanityFilter });
  const apply = (text: string, c: ReturnType<typeof controls>, partial = false) =>
    applyWordControls(words(text), c, { partial })
      .map((t) => t.text)
      .join(' ');

  it('redacts, then masks profanity', () => {
    expect(apply('bastard card four one one one one one one one one one one one one one one one', controls(['pci'], true))).toBe('b****** card [PCI]');
  });

  it('in a live hypothesis, masks a number run no rule labels yet as the most general digit kind asked for', () => {
    expect(apply('card four one one one', controls(['pci']), true)).toBe('card [PCI]');
    expect(apply('card four one one one', controls(['pci']))).toBe('card four one one one');
    expect(apply('call five five five', controls(['ssn', 'phone']), true)).toBe('call [PHONE]');
    expect(apply('mail me', controls(['email']), true)).toBe('mail me');
  });
});
