// Translation plans and the token post-step, against the real installed apertium pairs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Token } from '../../engines/stt/interface.js';
import { apertiumEngine } from '../../engines/translate/apertium/descriptor.js';
import { createTranslationRegistry, type TranslationRegistry } from '../../engines/translate/registry.js';
import { oneWayTargets, planTranslation, twoWayPairs, unsupportedHints } from './plan.js';
import { RealtimeTranslationStep } from './realtime-step.js';
import { splitSegments, transcriptTokens, type TranslationToken } from './tokens.js';

let registry: TranslationRegistry;
beforeAll(async () => {
  registry = await createTranslationRegistry([apertiumEngine], { apertium: { idleMs: 0 } });
});
afterAll(async () => {
  await registry.close();
});

const EN = ['en'];

describe('planTranslation', () => {
  it('one_way to a target with a direction from the recognised language routes that language', () => {
    const r = planTranslation({ type: 'one_way', target_language: 'es' }, 'm', EN, registry);
    expect(r.ok && [...r.plan.routes]).toEqual([['en', 'es']]);
  });

  it('one_way to the recognised language itself is accepted and translates nothing', () => {
    const r = planTranslation({ type: 'one_way', target_language: 'en' }, 'm', EN, registry);
    expect(r.ok && r.plan.routes.size).toBe(0);
  });

  it('one_way to a target nothing reaches is refused naming the target and the available ones', () => {
    const r = planTranslation({ type: 'one_way', target_language: 'de' }, 'parlance-rt-en-v1', EN, registry);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.message).toContain('"de"');
      expect(r.message).toContain('parlance-rt-en-v1');
      expect(r.message).toMatch(/available targets: .*es/);
    }
  });

  it('two_way with both directions installed routes the recognised side only', () => {
    const r = planTranslation({ type: 'two_way', language_a: 'es', language_b: 'en' }, 'm', EN, registry);
    expect(r.ok && [...r.plan.routes]).toEqual([['en', 'es']]);
  });

  it('two_way is refused naming the pair when a direction is missing or neither side is recognisable', () => {
    const missing = planTranslation({ type: 'two_way', language_a: 'en', language_b: 'de' }, 'm', EN, registry);
    expect(!missing.ok && missing.message).toMatch(/"en" and "de".*available pairs: .*en:es/);
    const foreign = planTranslation({ type: 'two_way', language_a: 'fr', language_b: 'es' }, 'm', EN, registry);
    expect(!foreign.ok && foreign.message).toMatch(/"fr" and "es".*recognises only en/);
  });

  it('lists targets and two-way pairs reachable from the recognised languages', () => {
    const targets = oneWayTargets(registry, EN);
    expect(targets.get('es')).toEqual(['en']);
    expect(targets.has('pt')).toBe(false); // es→pt exists, but nothing recognises Spanish speech
    const pairs = twoWayPairs(registry, EN);
    expect(pairs).toContain('en:es');
    expect(pairs).toContain('ca:en');
    expect(pairs).not.toContain('es:pt');
  });

  it('finds strict hints the model lacks', () => {
    expect(unsupportedHints(['en', 'es', 'en', 'xx'], EN)).toEqual([
      { index: 1, language: 'es' },
      { index: 3, language: 'xx' },
    ]);
    // The SDK's translate({between}) sends the pair as strict hints: the pair's languages are accepted.
    expect(unsupportedHints(['en', 'es', 'xx'], EN, { type: 'two_way', language_a: 'en', language_b: 'es' })).toEqual([{ index: 2, language: 'xx' }]);
    expect(unsupportedHints(['es'], EN, { type: 'one_way', target_language: 'es' })).toEqual([{ index: 0, language: 'es' }]);
  });
});

const word = (text: string, start: number, end: number, confidence = 0.8): Token => ({ text, start_ms: start, end_ms: end, confidence });

describe('transcript post-step', () => {
  const words = [
    word('the', 0, 200),
    word('house', 200, 600, 0.6),
    word('is', 600, 800),
    word('red', 800, 1200, 1),
    word('good', 2500, 2800),
    word('morning', 2800, 3300),
  ];

  it('splits segments at pauses and at the word cap', () => {
    expect(splitSegments(words).map((s) => s.length)).toEqual([4, 2]);
    expect(splitSegments(words, 500, 3).map((s) => s.length)).toEqual([3, 1, 2]);
  });

  it('keeps a diarization speaker label on originals and their translation, and starts a segment at a speaker change', async () => {
    const r = planTranslation({ type: 'one_way', target_language: 'es' }, 'm', EN, registry);
    if (!r.ok) throw new Error(r.message);
    const spoken = words.slice(0, 4).map((w, i) => ({ ...w, speaker: i < 2 ? '1' : '2' }));
    expect(splitSegments(spoken).map((s) => s.length)).toEqual([2, 2]);
    const tokens = await transcriptTokens(spoken, { language: 'en', identifyLanguage: false, plan: r.plan }, registry);
    const bySpeaker = tokens.map((t) => `${t.speaker}:${t.translation_status}`);
    expect(bySpeaker[0]).toBe('1:original');
    expect(bySpeaker.at(-1)).toBe('2:translation');
    expect(bySpeaker.indexOf('2:original')).toBeGreaterThan(bySpeaker.indexOf('1:translation'));
  });

  it('leaves tokens unlabelled without language identification or translation', async () => {
    const tokens = await transcriptTokens(words, { language: 'en', identifyLanguage: false }, registry);
    expect(tokens.map((t) => t.text).join('')).toBe('the house is red good morning');
    expect(tokens.every((t) => !('language' in t) && !('translation_status' in t))).toBe(true);
  });

  it('labels every token with the recognised language under language identification', async () => {
    const tokens = await transcriptTokens(words, { language: 'en', identifyLanguage: true }, registry);
    expect(tokens.every((t) => t.language === 'en' && t.translation_status === undefined)).toBe(true);
  });

  it('one_way: each segment is followed by its translation, without timings', async () => {
    const r = planTranslation({ type: 'one_way', target_language: 'es' }, 'm', EN, registry);
    if (!r.ok) throw new Error(r.message);
    const tokens = await transcriptTokens(words, { language: 'en', identifyLanguage: false, plan: r.plan }, registry);
    const statuses = tokens.map((t) => t.translation_status);
    const firstTranslation = statuses.indexOf('translation');
    expect(statuses.slice(0, 4)).toEqual(['original', 'original', 'original', 'original']);
    expect(firstTranslation).toBe(4);
    const seg1 = tokens.slice(4, statuses.indexOf('original', 4));
    expect(seg1.map((t) => t.text).join('')).toMatch(/casa/i);
    for (const t of seg1) {
      expect(t).toMatchObject({ language: 'es', source_language: 'en', translation_status: 'translation', confidence: 0.8 });
      expect(t.start_ms).toBeUndefined();
      expect(t.end_ms).toBeUndefined();
      expect(t.text.startsWith(' ')).toBe(true);
    }
    const seg2 = tokens.slice(statuses.indexOf('original', 4) + 2);
    expect(seg2.map((t) => t.text).join('')).toMatch(/buen/i);
    expect(tokens.filter((t) => t.translation_status === 'original').every((t) => t.language === 'en' && t.source_language === undefined)).toBe(true);
  });

  it('identified segment languages label their segments and choose the translation source of each', async () => {
    const r = planTranslation({ type: 'one_way', target_language: 'es' }, 'm', ['en', 'ja'], registry);
    if (!r.ok) throw new Error(r.message);
    const tokens = await transcriptTokens(words, { language: 'en', identifyLanguage: true, plan: r.plan }, registry, undefined, ['ja', undefined]);
    // first segment heard as Japanese: no ja -> es direction, so it stays untranslated ("none")
    expect(tokens.slice(0, 4).map((t) => `${t.language}:${t.translation_status}`)).toEqual(Array(4).fill('ja:none'));
    // second segment: undefined falls back to the model's language, translated from it
    expect(tokens.slice(4, 6).map((t) => `${t.language}:${t.translation_status}`)).toEqual(['en:original', 'en:original']);
    expect(
      tokens
        .slice(6)
        .map((t) => t.text)
        .join(''),
    ).toMatch(/buen/i);
    expect(tokens.slice(6).every((t) => t.source_language === 'en' && t.language === 'es')).toBe(true);
    // identification alone: labels only
    const labelled = await transcriptTokens(words, { language: 'en', identifyLanguage: true }, registry, undefined, ['de', 'fr']);
    expect(labelled.map((t) => t.language)).toEqual(['de', 'de', 'de', 'de', 'fr', 'fr']);
  });

  it('one_way to the spoken language marks everything none', async () => {
    const r = planTranslation({ type: 'one_way', target_language: 'en' }, 'm', EN, registry);
    if (!r.ok) throw new Error(r.message);
    const tokens = await transcriptTokens(words, { language: 'en', identifyLanguage: false, plan: r.plan }, registry);
    expect(tokens).toHaveLength(words.length);
    expect(tokens.every((t) => t.translation_status === 'none' && t.language === 'en')).toBe(true);
  });
});

describe('real-time post-step', () => {
  it("emits each utterance's translation in order, runs `then` after it, and drains before finalize/finish", async () => {
    const r = planTranslation({ type: 'two_way', language_a: 'en', language_b: 'es' }, 'm', EN, registry);
    if (!r.ok) throw new Error(r.message);
    const events: string[] = [];
    const step = new RealtimeTranslationStep({ language: 'en', plan: r.plan, identifyLanguage: false }, registry, new AbortController().signal, {
      emit: (tokens: TranslationToken[]) => events.push(tokens.map((t) => t.text).join('')),
      fail: (err) => events.push(`fail ${String(err)}`),
    });
    expect(step.labels).toEqual({ language: 'en', translation_status: 'original' });
    step.final([word('the', 0, 100), word('house', 100, 300)], () => events.push('<end>'));
    step.final([word('the', 900, 1000), word('dog', 1000, 1300)]);
    step.final([], () => events.push('<end>'));
    expect(events).toEqual([]); // nothing synchronously: translation runs off the event loop
    await step.drained();
    expect(events).toHaveLength(4);
    expect(events[0]).toMatch(/casa/i);
    expect(events[1]).toBe('<end>');
    expect(events[2]).toMatch(/perro/i);
    expect(events[3]).toBe('<end>');
  });

  it('without a translation route, `then` runs at once; after abort nothing is emitted and nothing fails', async () => {
    const events: string[] = [];
    const io = { emit: () => events.push('emit'), fail: () => events.push('fail') };
    const none = new RealtimeTranslationStep({ language: 'en', identifyLanguage: true }, registry, new AbortController().signal, io);
    expect(none.labels).toEqual({ language: 'en' });
    none.final([word('hi', 0, 100)], () => events.push('<end>'));
    expect(events).toEqual(['<end>']);
    const r = planTranslation({ type: 'one_way', target_language: 'es' }, 'm', EN, registry);
    if (!r.ok) throw new Error(r.message);
    const ac = new AbortController();
    const aborted = new RealtimeTranslationStep({ language: 'en', plan: r.plan, identifyLanguage: false }, registry, ac.signal, io);
    aborted.final([word('hello', 0, 100)], () => events.push('late <end>'));
    ac.abort();
    await aborted.drained();
    expect(events).toEqual(['<end>']);
  });
});
