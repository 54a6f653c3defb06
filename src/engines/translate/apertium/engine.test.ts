// The apertium engine against the real Debian apertium and its installed pairs (scripts/debian-packages.txt).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TranslationError } from '../interface.js';
import { TranslationRegistry } from '../registry.js';
import { ApertiumEngine, cleanOutput, parseModes } from './engine.js';

describe('parseModes', () => {
  it('keeps plain pairs, maps ISO 639-3 names to 639-1 and skips variants', () => {
    const listing = ['  eng-spa', '  spa-eng_US', '  en-eo-bytecode', '  eo-en', '  eco-es-fr', '  es-pt', '  en-gl', '  eng-glg', '  spa-ast', ''].join('\n');
    expect(parseModes(listing)).toEqual([
      { source: 'en', target: 'es', mode: 'eng-spa' },
      { source: 'en', target: 'gl', mode: 'en-gl' },
      { source: 'eo', target: 'en', mode: 'eo-en' },
      { source: 'es', target: 'ast', mode: 'spa-ast' },
      { source: 'es', target: 'pt', mode: 'es-pt' },
    ]);
  });

  it('cleans unknown-word marks and doubled spaces', () => {
    expect(cleanOutput(' la canoa *slid en  el #liso @x ')).toBe('la canoa slid en el liso x');
  });
});

describe('ApertiumEngine (real apertium)', () => {
  let engine: ApertiumEngine;

  beforeAll(async () => {
    engine = await ApertiumEngine.create({ idleMs: 30_000, maxProcesses: 2 });
  });
  afterAll(async () => {
    await engine.close();
  });

  it('discovers the installed English pairs in both directions', () => {
    const pairs = engine.pairs.map((p) => `${p.source}-${p.target}`);
    for (const p of ['en-es', 'es-en', 'en-ca', 'ca-en', 'en-eo', 'eo-en', 'en-gl', 'es-pt', 'fr-es']) expect(pairs).toContain(p);
    expect(engine.modeOf('en', 'es')).toBe('eng-spa');
  });

  it('translates a batch of segments line by line, in order, keeping empty ones', async () => {
    const out = await engine.translate('en', 'es', ['the house is red', '', 'I have a dog', 'the birch canoe slid on the smooth planks']);
    expect(out).toHaveLength(4);
    expect(out[0]).toMatch(/casa/i);
    expect(out[0]).toMatch(/roj/i);
    expect(out[1]).toBe('');
    expect(out[2]).toMatch(/perro/i);
    expect(out[3]).toMatch(/canoa/i);
    // Unknown words pass through without apertium's `*` marks.
    expect(out.join(' ')).not.toMatch(/[*#@]/);
  });

  it('keeps one line per segment even with line breaks and stream-format characters inside a segment', async () => {
    const out = await engine.translate('en', 'ca', ['the dog\nis big', 'a [b] ^c$ d/e \\ @ <x> {y}', 'good morning']);
    expect(out).toHaveLength(3);
    expect(out[0]).toMatch(/gos/i);
    expect(out[1]).toContain('[');
    expect(out[2]).toMatch(/bon/i);
  });

  it('translates the other direction and other pairs', async () => {
    expect((await engine.translate('es', 'en', ['el perro es grande']))[0]).toMatch(/dog/i);
    expect((await engine.translate('en', 'eo', ['the dog']))[0]).toMatch(/hundo/i);
  });

  it('serves later calls from a loaded spare process', async () => {
    const e = await ApertiumEngine.create({ idleMs: 30_000 });
    try {
      const t0 = performance.now();
      await e.translate('es', 'pt', ['hola']);
      const cold = performance.now() - t0;
      // Give the spare time to load, as it has between real requests.
      await new Promise((r) => setTimeout(r, 1500));
      const t1 = performance.now();
      expect((await e.translate('es', 'pt', ['el perro']))[0]).toMatch(/cão|cachorro/i);
      const warm = performance.now() - t1;
      expect(e.stats.spareHits).toBe(1);
      console.log(`apertium es-pt: cold call ${cold.toFixed(0)} ms, call on a loaded spare ${warm.toFixed(0)} ms`);
    } finally {
      await e.close();
    }
  });

  it('prepare() loads a spare ahead of the first call', async () => {
    const e = await ApertiumEngine.create({ idleMs: 30_000 });
    try {
      e.prepare('fr', 'es');
      e.prepare('fr', 'es'); // idempotent: still one spare
      e.prepare('en', 'de'); // no such direction: nothing
      expect(e.stats.spawned).toBe(1);
      await new Promise((r) => setTimeout(r, 1500));
      const t0 = performance.now();
      expect((await e.translate('fr', 'es', ['le chien']))[0]).toMatch(/perro/i);
      console.log(`apertium fr-es after prepare(): first call ${(performance.now() - t0).toFixed(0)} ms`);
      expect(e.stats.spareHits).toBe(1);
    } finally {
      await e.close();
    }
  });

  it('runs at most maxProcesses at once and still answers every call', async () => {
    const e = await ApertiumEngine.create({ idleMs: 0, maxProcesses: 1 });
    try {
      const outs = await Promise.all(['one dog', 'two dogs', 'three dogs'].map((s) => e.translate('en', 'es', [s])));
      expect(outs.map((o) => o[0])).toEqual([expect.stringMatching(/perro/), expect.stringMatching(/perros/), expect.stringMatching(/perros/)]);
      expect(e.stats.spawned).toBe(3);
      expect(e.stats.spareHits).toBe(0);
    } finally {
      await e.close();
    }
  });

  it('refuses a direction it lacks, an aborted call and a call past its time limit', async () => {
    await expect(engine.translate('en', 'de', ['hello'])).rejects.toBeInstanceOf(TranslationError);
    const ac = new AbortController();
    const p = engine.translate('en', 'es', ['hello'], { signal: ac.signal });
    ac.abort(new Error('client went away'));
    await expect(p).rejects.toThrow('client went away');
    const slow = await ApertiumEngine.create({ idleMs: 0, timeoutMs: 1 });
    try {
      await expect(slow.translate('en', 'es', ['hello'])).rejects.toThrow(/longer than 1 ms/);
    } finally {
      await slow.close();
    }
  });

  it('is unusable after close', async () => {
    const e = await ApertiumEngine.create();
    await e.close();
    await expect(e.translate('en', 'es', ['hello'])).rejects.toThrow(/shut down/);
  });

  it('has no pairs when the data directory holds no modes', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'parlance-apertium-'));
    try {
      const e = await ApertiumEngine.create({ dataDir: dir });
      expect(e.pairs).toEqual([]);
      const registry = new TranslationRegistry().register(e);
      expect(registry.has('en', 'es')).toBe(false);
      await registry.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
