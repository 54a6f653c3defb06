import { describe, expect, it } from 'vitest';
import type { Recognizer, SttEngine } from './interface.js';
import { ModelLoadFailedError, parseVersionedId, SttRegistry } from './registry.js';

function fakeEngine(id: string, languages: string[]): SttEngine {
  return {
    id,
    languages,
    features: { timestamps: true, confidence: true, streaming: false, diarization: false, translation: false },
    load: () => Promise.reject(new Error('not loadable in this test')) as Promise<Recognizer>,
    close: () => Promise.resolve(),
  };
}

const features = { timestamps: true, confidence: true, streaming: true, diarization: false, translation: false };

describe('SttRegistry', () => {
  function registry(): SttRegistry {
    return new SttRegistry()
      .registerEngine(fakeEngine('sphinx', ['en']))
      .registerModel({ id: 'acme-en-v1', aliases: ['english-old'], engineId: 'sphinx', engineModel: 'en-us', languages: ['en'], features })
      .registerModel({ id: 'acme-en-v2', aliases: ['english'], engineId: 'sphinx', engineModel: 'en-us-2', languages: ['en'], features });
  }

  it('resolves canonical ids, aliases and family names to the newest version', () => {
    const r = registry();
    expect(r.resolve('acme-en-v1')?.canonicalId).toBe('acme-en-v1');
    expect(r.resolve('english-old')?.canonicalId).toBe('acme-en-v1');
    expect(r.resolve('english')?.model.engineModel).toBe('en-us-2');
    expect(r.resolve('acme-en')?.canonicalId).toBe('acme-en-v2');
    expect(r.resolve('acme-en')?.engine.id).toBe('sphinx');
    expect(r.namesOf('acme-en-v2').sort()).toEqual(['acme-en', 'english']);
    expect(r.list().map((m) => m.id)).toEqual(['acme-en-v1', 'acme-en-v2']);
  });

  it('takes a model out at run time: its id and aliases no longer resolve, its family name falls back to the other version', () => {
    const r = registry();
    expect(r.unregisterModel('acme-en-v2')).toBe(true);
    expect(r.resolve('acme-en-v2')).toBeUndefined();
    expect(r.resolve('english')).toBeUndefined();
    expect(r.resolve('acme-en')?.canonicalId).toBe('acme-en-v1');
    expect(r.list().map((m) => m.id)).toEqual(['acme-en-v1']);
    expect(r.unregisterModel('acme-en-v2')).toBe(false);
    // Its names are free again.
    r.registerModel({ id: 'acme-en-v3', aliases: ['english'], engineId: 'sphinx', engineModel: 'en-us-3', languages: ['en'], features });
    expect(r.resolve('english')?.canonicalId).toBe('acme-en-v3');
    expect(r.resolve('acme-en')?.canonicalId).toBe('acme-en-v3');
  });

  it('returns undefined for unknown or differently-cased ids', () => {
    const r = registry();
    expect(r.resolve('acme-en-v3')).toBeUndefined();
    expect(r.resolve('ACME-EN-V1')).toBeUndefined();
    expect(r.resolve('')).toBeUndefined();
  });

  it('rejects bad registrations', () => {
    const r = registry();
    expect(() => r.registerModel({ id: 'no-version', engineId: 'sphinx', engineModel: 'x', languages: ['en'], features })).toThrow(/version suffix/);
    expect(() => r.registerModel({ id: 'x-v1', engineId: 'nope', engineModel: 'x', languages: ['en'], features })).toThrow(/unknown engine/);
    expect(() => r.registerModel({ id: 'x-v1', engineId: 'sphinx', engineModel: 'x', languages: ['fr'], features })).toThrow(/language 'fr'/);
    expect(() => r.registerModel({ id: 'x-v1', aliases: ['english'], engineId: 'sphinx', engineModel: 'x', languages: ['en'], features })).toThrow(
      /already taken/,
    );
    expect(() => r.registerEngine(fakeEngine('sphinx', ['en']))).toThrow(/already registered/);
  });

  it("reports each model's pools under its id, as its engine reports them", () => {
    const loaded = new Set(['en-us-2']);
    const engine: SttEngine = {
      ...fakeEngine('pools', ['en']),
      slots: (engineModel) => (loaded.has(engineModel) ? [{ pool: 'stt_batch', busy: 1, total: 2 }] : []),
    };
    const r = registry()
      .registerEngine(engine)
      .registerModel({ id: 'pooled-v1', engineId: 'pools', engineModel: 'en-us-2', languages: ['en'], features });
    // sphinx reports no pools; pools' one model is loaded.
    expect(r.slots()).toEqual([{ pool: 'stt_batch', busy: 1, total: 2, model: 'pooled-v1' }]);
  });

  it('parses version suffixes', () => {
    expect(parseVersionedId('parlance-en-pocketsphinx-v12')).toEqual({ family: 'parlance-en-pocketsphinx', version: 12 });
    expect(parseVersionedId('plain')).toBeUndefined();
  });
});

describe('SttRegistry.load', () => {
  /** A registry whose one model's engine fails its loads while `broken` says so; `calls` counts the engine's loads. */
  function withEngine(opts: { broken: () => boolean; settle?: Promise<void> }) {
    let clock = 1_000_000;
    const logs: { level: string; msg: string; detail?: Record<string, unknown> }[] = [];
    const recognizer = { engineId: 'e', engineModel: 'm' } as Recognizer;
    const engine = { ...fakeEngine('e', ['en']), calls: 0 };
    engine.load = async () => {
      engine.calls++;
      await opts.settle;
      if (opts.broken()) throw new Error('the model file is not an encoder');
      return recognizer;
    };
    const registry = new SttRegistry({ loadRetryMs: 60_000, now: () => clock, log: (level, msg, detail) => logs.push({ level, msg, detail }) })
      .registerEngine(engine)
      .registerModel({ id: 'broken-v1', engineId: 'e', engineModel: 'm', languages: ['en'], features });
    return { registry, engine, logs, recognizer, advance: (ms: number) => (clock += ms) };
  }

  it('remembers a failed load: logged once with the reason, refused without trying until the retry window passed', async () => {
    const { registry, engine, logs, advance } = withEngine({ broken: () => true });
    await expect(registry.load('broken-v1')).rejects.toThrow(ModelLoadFailedError);
    expect(registry.loadFailure('broken-v1')).toBe('the model file is not an encoder');
    expect(logs).toEqual([
      {
        level: 'error',
        msg: 'speech model could not be loaded: requests for it get model_not_available',
        detail: { model: 'broken-v1', reason: 'the model file is not an encoder', retry_after_s: 60 },
      },
    ]);
    advance(59_000);
    expect(registry.refusal('broken-v1')).toBeInstanceOf(ModelLoadFailedError);
    await expect(registry.load('broken-v1')).rejects.toMatchObject({ modelId: 'broken-v1', reason: 'the model file is not an encoder' });
    expect(engine.calls).toBe(1);
    expect(logs).toHaveLength(1);
    // Past the window the next request tries again (and fails again: logged again).
    advance(1_000);
    expect(registry.refusal('broken-v1')).toBeUndefined();
    expect(registry.loadFailure('broken-v1')).toBe('the model file is not an encoder');
    await expect(registry.load('broken-v1')).rejects.toThrow(ModelLoadFailedError);
    expect(engine.calls).toBe(2);
    expect(logs).toHaveLength(2);
  });

  it('forgets the failure once a later attempt loads the model', async () => {
    let broken = true;
    const { registry, logs, recognizer, advance } = withEngine({ broken: () => broken });
    await expect(registry.load('broken-v1')).rejects.toThrow(ModelLoadFailedError);
    broken = false;
    advance(60_000);
    await expect(registry.load('broken-v1')).resolves.toBe(recognizer);
    expect(registry.loadFailure('broken-v1')).toBeUndefined();
    expect(registry.refusal('broken-v1')).toBeUndefined();
    expect(logs.at(-1)).toMatchObject({ level: 'info', detail: { model: 'broken-v1' } });
  });

  it('shares one attempt among concurrent requests; a request that gives up leaves it to the others', async () => {
    let release!: () => void;
    const settle = new Promise<void>((r) => (release = r));
    const { registry, engine, logs } = withEngine({ broken: () => true, settle });
    const gone = new AbortController();
    const leaving = registry.load('broken-v1', { signal: gone.signal });
    const waiting = [registry.load('broken-v1'), registry.load('broken-v1')];
    gone.abort(new Error('client went away'));
    await expect(leaving).rejects.toThrow('client went away');
    release();
    for (const w of waiting) await expect(w).rejects.toThrow(ModelLoadFailedError);
    expect(engine.calls).toBe(1);
    expect(logs).toHaveLength(1);
  });
});
