import { describe, expect, it } from 'vitest';
import type { Recognizer, SttEngine } from './interface.js';
import { parseVersionedId, SttRegistry } from './registry.js';

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

  it('parses version suffixes', () => {
    expect(parseVersionedId('parlance-en-pocketsphinx-v12')).toEqual({ family: 'parlance-en-pocketsphinx', version: 12 });
    expect(parseVersionedId('plain')).toBeUndefined();
  });
});
