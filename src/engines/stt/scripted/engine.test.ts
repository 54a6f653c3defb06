import { describe, expect, it } from 'vitest';
import type { FinalInfo, StreamingSession, Token } from '../interface.js';
import { type Script, scriptedEngine } from './engine.js';

const ms = (n: number) => new Uint8Array(n * 32); // n ms of 16 kHz s16le
const HELLO_WORLD: Script = {
  words: [
    { text: 'hello', start_ms: 100, end_ms: 400 },
    { text: 'world', start_ms: 450, end_ms: 800 },
    { text: 'again', start_ms: 2000, end_ms: 2300 },
  ],
};

type Event = { partial: string[] } | { final: string[]; info: FinalInfo } | { error: string };

async function open(script: Script, options = {}): Promise<{ s: StreamingSession; events: Event[] }> {
  const recognizer = await scriptedEngine(script).load('test');
  const s = await recognizer.stream(options);
  const events: Event[] = [];
  const words = (tokens: Token[]) => tokens.map((t) => t.text);
  s.on('partial', (t) => events.push({ partial: words(t) }));
  s.on('final', (t, info) => events.push({ final: words(t), info }));
  s.on('error', (e) => events.push({ error: e.message }));
  return { s, events };
}

async function feed(s: StreamingSession, totalMs: number, stepMs = 20): Promise<void> {
  for (let t = 0; t < totalMs; t += stepMs) await s.write(ms(stepMs));
}

describe('scripted STT engine', () => {
  it('shows heard words as partials, ends the utterance after the endpoint silence, each final once', async () => {
    const { s, events } = await open(HELLO_WORLD, { endpointSilenceMs: 600, partialIntervalMs: 200 });
    await feed(s, 3000);
    await s.end();
    expect(events).toEqual([
      { partial: ['hello'] },
      { partial: ['hello', 'world'] },
      { final: ['hello', 'world'], info: { endpoint: true } },
      { partial: ['again'] },
      { final: ['again'], info: { endpoint: true } },
    ]);
    expect(s.audioMs).toBe(3000);
    expect(s.closed).toBe(true);
  });

  it('finalize cuts the word under way at the audio received; no endpoint when turned off', async () => {
    const { s, events } = await open(HELLO_WORLD, { endpointSilenceMs: 0 });
    await feed(s, 2100);
    await s.finalize();
    expect(events.filter((e) => 'final' in e)).toEqual([{ final: ['hello', 'world', 'again'], info: { endpoint: false } }]);
    await s.write(ms(1000));
    await s.end();
    expect(events.filter((e) => 'final' in e)).toHaveLength(1);
  });

  it('fails at the scripted audio time and emits nothing after', async () => {
    const { s, events } = await open({ ...HELLO_WORLD, failure: { atMs: 500, message: 'engine crashed' } });
    await feed(s, 1000);
    await s.end();
    expect(events).toEqual([{ partial: ['hello'] }, { error: 'engine crashed' }]);
  });

  it('transcribes the words the audio reaches, and refuses overlapping scripts', async () => {
    const r = await scriptedEngine(HELLO_WORLD).load('test');
    async function* audio() {
      yield ms(1000);
    }
    expect((await r.transcribe(audio())).map((t) => t.text)).toEqual(['hello', 'world']);
    expect(() => scriptedEngine({ words: [HELLO_WORLD.words[1]!, HELLO_WORLD.words[0]!] })).toThrow(/overlaps/);
  });
});
