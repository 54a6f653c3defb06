// The engine catalog with the real engines of the list: what each offers, an engine added with one line (the scripted
// STT engine), and a model whose load fails.
import { afterEach, describe, expect, it } from 'vitest';
import { EngineCatalog, ENGINES } from './catalog.js';
import { ModelLoadFailedError } from './stt/registry.js';
import { scriptedSttEngine } from './stt/scripted/descriptor.js';

const open: EngineCatalog[] = [];
async function catalog(...args: Parameters<typeof EngineCatalog.create>): Promise<EngineCatalog> {
  const c = await EngineCatalog.create(...args);
  open.push(c);
  return c;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

const ms = (n: number) => new Uint8Array(n * 32); // n ms of 16 kHz s16le

describe('EngineCatalog', () => {
  it("offers the built-in STT model under its public ids, in the list's order", async () => {
    const c = await catalog({});
    expect(c.stt.offers()).toEqual([
      { id: 'parlance-async-en-v1', name: 'Parlance English v1 (pocketsphinx), async', mode: 'async', engineModelId: 'parlance-en-pocketsphinx-v1' },
      { id: 'parlance-rt-en-v1', name: 'Parlance English v1 (pocketsphinx), real time', mode: 'real_time', engineModelId: 'parlance-en-pocketsphinx-v1' },
    ]);
    // Nothing is loaded: no engine has slots to report.
    expect(c.slots().filter((s) => s.pool.startsWith('stt_'))).toEqual([]);
  });

  it('serves an engine added to the list with one line', async () => {
    const script = { words: [{ text: 'hello', start_ms: 100, end_ms: 400 }] };
    const c = await catalog({}, [...ENGINES, scriptedSttEngine(script)]);
    expect(c.stt.offers().filter((o) => o.engineModelId === 'scripted-v1')).toEqual([
      { id: 'scripted-v1', name: 'Scripted words (tests)', mode: 'async', engineModelId: 'scripted-v1' },
      { id: 'scripted-v1', name: 'Scripted words (tests)', mode: 'real_time', engineModelId: 'scripted-v1' },
    ]);
    const recognizer = await c.stt.load('scripted-v1');
    expect(
      (
        await recognizer.transcribe(
          (async function* () {
            yield ms(500);
          })(),
        )
      ).map((t) => t.text),
    ).toEqual(['hello']);
  });

  it('refuses a model whose load fails, with the reason', async () => {
    const missing = { hmm: '/nonexistent/en-us', lm: '/nonexistent/en-us.lm.bin', dict: '/nonexistent/cmudict-en-us.dict' };
    const c = await catalog({ stt: { pocketsphinx: { models: { 'en-us': missing } } } });
    await expect(c.stt.load('parlance-en-pocketsphinx-v1')).rejects.toThrow(ModelLoadFailedError);
    expect(c.stt.loadFailure('parlance-en-pocketsphinx-v1')).toMatch(/acoustic model directory \/nonexistent\/en-us/);
  });
});
