import { describe, expect, it } from 'vitest';
import { SttRegistry } from '../../engines/stt/registry.js';
import { SCRIPTED_FEATURES, scriptedEngine } from '../../engines/stt/scripted/engine.js';
import { END_TOKEN, FIN_TOKEN, sonioxFrame } from './soniox-socket.js';
import { TokenTracker } from './tokens.js';

const tok = (text: string, start_ms: number, end_ms: number, confidence = 1) => ({ text, start_ms, end_ms, confidence });

/** The tracker's next update as the Soniox renderer writes it. */
const frameOf = (t: TokenTracker, audioMs: number) => sonioxFrame(t.update(audioMs));

describe('TokenTracker', () => {
  it('replaces non-final tokens, sends each final token once with the leading-space convention', () => {
    const t = new TokenTracker(true);
    t.partial([tok('the', 100, 200)]);
    expect(frameOf(t, 300)).toEqual({
      tokens: [{ text: 'the', start_ms: 100, end_ms: 200, confidence: 1, is_final: false }],
      final_audio_proc_ms: 0,
      total_audio_proc_ms: 300,
    });
    t.partial([tok('the', 100, 200), tok('quick', 200, 400)]);
    expect(frameOf(t, 500).tokens.map((x) => x.text)).toEqual(['the', ' quick']);
    t.final([tok('the', 100, 210, 0.51234), tok('quick', 210, 400)]);
    t.partial([tok('fox', 700, 900)]);
    const f = frameOf(t, 1000);
    expect(f.tokens).toEqual([
      { text: 'the', start_ms: 100, end_ms: 210, confidence: 0.512, is_final: true },
      { text: ' quick', start_ms: 210, end_ms: 400, confidence: 1, is_final: true },
      { text: ' fox', start_ms: 700, end_ms: 900, confidence: 1, is_final: false },
    ]);
    expect(f.final_audio_proc_ms).toBe(400);
    expect(t.hasNews()).toBe(false);
    t.final([tok('fox', 700, 900)]);
    t.mark('endpoint');
    expect(frameOf(t, 1100).tokens).toEqual([
      { text: ' fox', start_ms: 700, end_ms: 900, confidence: 1, is_final: true },
      { text: END_TOKEN, confidence: 1, is_final: true },
    ]);
  });

  it('finalizedUpTo clears non-final tokens and advances final audio; times never go backwards', () => {
    const t = new TokenTracker(true);
    t.partial([tok('a', 0, 100)]);
    frameOf(t, 2000);
    t.finalizedUpTo(1500);
    t.mark('finalized');
    const f = frameOf(t, 1200);
    expect(f.tokens).toEqual([{ text: FIN_TOKEN, confidence: 1, is_final: true }]);
    expect(f.final_audio_proc_ms).toBe(1500);
    expect(f.total_audio_proc_ms).toBe(2000);
  });

  it('never shows a non-final token once the audio is more than maxNonFinalMs past its start', () => {
    const t = new TokenTracker(true, {}, undefined, 360);
    t.partial([tok('late', 100, 300), tok('word', 300, 450)]);
    // 460 - 100 = 360: still shown; the second token is well inside the bound.
    expect(frameOf(t, 460).tokens.map((x) => x.text)).toEqual(['late', ' word']);
    t.partial([tok('late', 100, 300), tok('word', 300, 450), tok('more', 450, 470)]);
    const f = frameOf(t, 470);
    // 370 ms past 'late': hidden until its final arrives; final audio still stops where it starts.
    expect(f.tokens.map((x) => x.text)).toEqual([' word', ' more']);
    expect(f.final_audio_proc_ms).toBe(0);
    t.final([tok('late', 100, 300), tok('word', 300, 450), tok('more', 450, 470)]);
    expect(frameOf(t, 480).tokens.map((x) => [x.text, x.is_final])).toEqual([
      ['late', true],
      [' word', true],
      [' more', true],
    ]);
  });

  it('without non-final tokens only final ones are sent', () => {
    const t = new TokenTracker(false);
    t.partial([tok('a', 0, 100)]);
    expect(t.hasNews()).toBe(false);
    t.final([tok('a', 0, 100)]);
    expect(frameOf(t, 200).tokens.map((x) => x.is_final)).toEqual([true]);
  });

  it('with a speaker function: final and non-final tokens carry its label, marker tokens none', () => {
    const asked: [number, number][] = [];
    const t = new TokenTracker(true, {}, (start, end) => {
      asked.push([start, end]);
      return start < 1000 ? '1' : '2';
    });
    t.final([tok('hello', 100, 400)]);
    t.mark('endpoint');
    t.partial([tok('there', 1200, 1500)]);
    expect(frameOf(t, 1600).tokens).toEqual([
      { text: 'hello', start_ms: 100, end_ms: 400, confidence: 1, is_final: true, speaker: '1' },
      { text: END_TOKEN, confidence: 1, is_final: true },
      { text: ' there', start_ms: 1200, end_ms: 1500, confidence: 1, is_final: false, speaker: '2' },
    ]);
    expect(asked).toEqual([
      [100, 400],
      [1200, 1500],
    ]);
  });

  it("turns a scripted engine's events into frames: partials replaced, finals once, <end> after each", async () => {
    const registry = new SttRegistry()
      .registerEngine(scriptedEngine({ words: [tok('hello', 100, 400), tok('world', 450, 800), tok('again', 2000, 2300)] }))
      .registerModel({ id: 'scripted-en-v1', engineId: 'scripted', engineModel: 'test', languages: ['en'], features: SCRIPTED_FEATURES });
    const s = await (await registry.load('scripted-en-v1')).stream({ endpointSilenceMs: 600 });
    const tracker = new TokenTracker(true);
    s.on('partial', (t) => tracker.partial(t));
    s.on('final', (t, info) => {
      tracker.final(t);
      if (info.endpoint) tracker.mark('endpoint');
    });
    const frames: string[] = [];
    for (let t = 20; t <= 3000; t += 20) {
      await s.write(new Uint8Array(20 * 32));
      if (tracker.hasNews())
        frames.push(
          frameOf(tracker, t)
            .tokens.map((x) => `${x.text}${x.is_final ? '' : '?'}`)
            .join(''),
        );
    }
    expect(frames).toEqual(['hello?', 'hello? world?', 'hello world<end>', ' again?', ' again<end>']);
  });
});
