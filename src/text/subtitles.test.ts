import { describe, expect, it } from 'vitest';
import { cuesOf, exportTranscript, type SegmentToken, timecode, toSrt, toText, toVtt } from './subtitles.js';

/** Words 300 ms long with `gap` ms between them, from `start`; texts joined as transcripts store them. */
function words(text: string, start = 0, gap = 100, extra: Partial<SegmentToken> = {}): SegmentToken[] {
  return text
    .split(' ')
    .map((w, i) => ({ text: i === 0 ? w : ` ${w}`, start_ms: start + i * (300 + gap), end_ms: start + i * (300 + gap) + 300, confidence: 0.9, ...extra }));
}

describe('cuesOf', () => {
  it('splits at sentence ends and keeps the words and times', () => {
    const cues = cuesOf(words('Hello there. How are you?'));
    expect(cues.map((c) => c.text)).toEqual(['Hello there.', 'How are you?']);
    expect(cues[0]).toMatchObject({ startMs: 0, endMs: 700 });
    expect(cues[1]).toMatchObject({ startMs: 800, endMs: 1900 });
    expect(cues[1]!.words.map((w) => w.text)).toEqual(['How', 'are', 'you?']);
  });

  it('splits at pauses, speaker changes and the length caps, never after a title', () => {
    expect(cuesOf([...words('one two'), ...words('three four', 2000)]).map((c) => c.text)).toEqual(['one two', 'three four']);
    expect(cuesOf([...words('one two', 0, 100, { speaker: '1' }), ...words('three', 800, 100, { speaker: '2' })]).map((c) => [c.text, c.speaker])).toEqual([
      ['one two', '1'],
      ['three', '2'],
    ]);
    expect(cuesOf(words('ask Mr. Smith now')).map((c) => c.text)).toEqual(['ask Mr. Smith now']);
    const long = cuesOf(words(Array.from({ length: 30 }, (_, i) => `w${i}`).join(' ')));
    expect(long.length).toBeGreaterThan(1);
    for (const c of long) {
      expect(c.endMs - c.startMs).toBeLessThanOrEqual(7000);
      expect(c.text.length).toBeLessThanOrEqual(84);
    }
    expect(long.flatMap((c) => c.words).length).toBe(30);
  });

  it("makes a multichannel transcript's cues per channel, in order of their start", () => {
    // Channel 1 answers while channel 0 is still talking: one cue each, not a cue cut at every word.
    const tokens: SegmentToken[] = [...words('hello how are you', 0, 100, { channel: 0 }), ...words('fine thanks', 500, 100, { channel: 1 })].sort(
      (a, b) => a.start_ms! - b.start_ms!,
    );
    expect(cuesOf(tokens).map((c) => [c.channel, c.text])).toEqual([
      [0, 'hello how are you'],
      [1, 'fine thanks'],
    ]);
  });

  it('keeps a translated stretch whole, its translation attached', () => {
    const tokens: SegmentToken[] = [
      ...words('good morning. see you', 0, 100, { translation_status: 'original' }),
      { text: ' buenos', confidence: 0.9, translation_status: 'translation' },
      { text: ' días', confidence: 0.9, translation_status: 'translation' },
      ...words('bye', 3000, 100, { translation_status: 'original' }),
      { text: ' adiós', confidence: 0.9, translation_status: 'translation' },
    ];
    expect(cuesOf(tokens).map((c) => [c.text, c.translation])).toEqual([
      ['good morning. see you', 'buenos días'],
      ['bye', 'adiós'],
    ]);
  });
});

describe('renderings', () => {
  const cues = cuesOf([...words('Hello there.', 1000, 100, { speaker: '1' }), ...words('Fish & <chips>', 3_723_000, 100, { speaker: '2' })]);

  it('timecodes', () => {
    expect(timecode(3_723_456, ',')).toBe('01:02:03,456');
    expect(timecode(5, '.')).toBe('00:00:00.005');
  });

  it('SRT, with and without speakers', () => {
    expect(toSrt(cues)).toBe('1\n00:00:01,000 --> 00:00:01,700\nHello there.\n\n2\n01:02:03,000 --> 01:02:04,100\nFish & <chips>\n');
    expect(toSrt(cues, { speakers: true })).toContain('Speaker 2: Fish & <chips>');
  });

  it('WebVTT escapes markup and labels speakers as voice spans', () => {
    expect(toVtt(cues)).toBe('WEBVTT\n\n00:00:01.000 --> 00:00:01.700\nHello there.\n\n01:02:03.000 --> 01:02:04.100\nFish &amp; &lt;chips&gt;\n');
    expect(toVtt(cues, { speakers: true })).toContain('<v Speaker 1>Hello there.');
  });

  it('text: a line per cue, or a paragraph per speaker turn', () => {
    expect(toText(cues)).toBe('Hello there.\nFish & <chips>\n');
    expect(toText(cues, { speakers: true })).toBe('Speaker 1: Hello there.\n\nSpeaker 2: Fish & <chips>\n');
  });

  it('exports label speakers only when the transcript was diarized, translations under their originals', () => {
    expect(exportTranscript(words('Hi.'), 'txt')).toBe('Hi.\n');
    expect(exportTranscript(words('Hi.', 0, 100, { speaker: '1' }), 'txt')).toBe('Speaker 1: Hi.\n');
    const translated = [...words('hello', 0, 100, { translation_status: 'original' }), { text: ' hola', confidence: 1, translation_status: 'translation' }];
    expect(exportTranscript(translated, 'srt')).toBe('1\n00:00:00,000 --> 00:00:00,300\nhello\nhola\n');
  });

  it('exports label the channels of a multichannel transcript, with their speakers when diarized', () => {
    const call = [...words('Hello.', 0, 100, { channel: 0 }), ...words('Hi.', 1000, 100, { channel: 1 })];
    expect(exportTranscript(call, 'txt')).toBe('Channel 0: Hello.\n\nChannel 1: Hi.\n');
    const diarized = call.map((t) => ({ ...t, speaker: '1' }));
    expect(exportTranscript(diarized, 'srt')).toContain('Channel 1, Speaker 1: Hi.');
    expect(exportTranscript(diarized, 'vtt')).toContain('<v Channel 0, Speaker 1>Hello.');
  });
});
