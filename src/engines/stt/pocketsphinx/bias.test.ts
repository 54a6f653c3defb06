// Context biasing (bias.ts, g2p.ts, addon setBias) with the real addon, model, espeak-ng and real recordings:
// Asterisk prompts (asterisk-core-sounds-en) whose words the dictionary lacks are recognised with `context.terms`
// and never without; a decoder that served a biased request decodes unbiased requests exactly as before; terms are
// written as given; unpronounceable terms are skipped with a log line.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeToPcm } from '../../../audio/decode.js';
import type { Recognizer } from '../interface.js';
import { BiasBuilder, contextLanguageModel, TermCasing } from './bias.js';
import { PocketsphinxEngine } from './engine.js';
import { ipaToArpabet, pronounce } from './g2p.js';
import { defaultModelPaths } from './options.js';
import { ASTERISK_EN } from '../../../../test/real-speech.js';

const words = (tokens: { text: string }[]) => tokens.map((t) => t.text).join(' ');

describe('g2p: espeak-ng phonemes → ARPAbet', () => {
  it('maps the IPA espeak-ng gives, ties and stress included', () => {
    expect(ipaToArpabet('kjˈuːbɚnˌiːts')).toBe('K Y UW B ER N IY T S');
    expect(ipaToArpabet('tˈɛnsɚ flˈo\u200dʊ')).toBe('T EH N S ER F L OW');
    expect(ipaToArpabet('pˈa\u200dɪ tˈɔː\u200dɹt\u200dʃ')).toBe('P AY T AO R CH');
    expect(ipaToArpabet('ʘ')).toBeUndefined();
  });

  it('pronounces several words with one espeak-ng run, case deciding letters or word', async () => {
    const p = await pronounce(['Soniox', 'PBX', 'unmute']);
    expect(p.get('PBX')).toBe('P IY B IY EH K S');
    expect(p.get('unmute')).toMatch(/^AH N M Y UW T$/);
    expect(p.get('Soniox')).toMatch(/^S OW N/);
  });
});

describe('context language model and term casing', () => {
  it('writes a bigram ARPA model whose unigrams sum to one', () => {
    const arpa = contextLanguageModel([['tensorflow'], ['new', 'york']], [['we', 'use', 'tensorflow']])!;
    expect(arpa).toMatch(/ngram 1=7\nngram 2=/);
    const uni = arpa
      .split('\\1-grams:\n')[1]!
      .split('\n\n')[0]!
      .split('\n')
      .map((l) => Number(l.split(' ')[0]));
    expect(uni.filter((p) => p > -99).reduce((a, p) => a + 10 ** p, 0)).toBeCloseTo(1, 3);
    expect(arpa).toContain(' new york\n');
    expect(contextLanguageModel([], [])).toBeUndefined();
  });

  it('writes recognised terms as given, multi-word terms word by word', () => {
    const casing = new TermCasing([['TensorFlow'], ['New', 'York', 'Times'], ['New', 'York']]);
    const t = (text: string) => ({ text, start_ms: 0, end_ms: 1, confidence: 1 });
    const out = casing.apply(['we', 'read', 'new', 'york', 'times', 'on', 'tensorflow', 'new', 'ideas'].map(t));
    expect(out.map((x) => x.text)).toEqual(['we', 'read', 'New', 'York', 'Times', 'on', 'TensorFlow', 'new', 'ideas']);
  });

  it('skips terms it cannot pronounce with a log line, keeping the others', async () => {
    const logged: string[] = [];
    const builder = new BiasBuilder(defaultModelPaths().dict, (_level, message, fields) => logged.push(`${message} ${JSON.stringify(fields)}`));
    const bias = await builder.build({ terms: ['Kubernetes', '12345', '日本'], text: '' });
    expect(bias!.decoder.words.map(([w]) => w)).toEqual(['kubernetes']);
    expect(logged.join('\n')).toMatch(/without a pronunciation.*日本.*12345/);
    expect(await builder.build({ terms: ['12345'], text: '' })).toBeUndefined();
    // An acronym read as a word gets its letters as a second pronunciation.
    const iax = await builder.build({ terms: ['IAX'], text: '' });
    expect(iax!.decoder.words).toEqual([
      ['iax', expect.stringMatching(/^AY AE K S$/)],
      ['iax(2)', 'AY EY EH K S'],
    ]);
  });
});

const asterisk = (name: string) => `${ASTERISK_EN}/${name}.wav`;
const HAVE_ASTERISK = existsSync(asterisk('conf-unmuted'));

describe.skipIf(!HAVE_ASTERISK)('decoding with a context (real recordings)', () => {
  let engine: PocketsphinxEngine;
  let recognizer: Recognizer;
  const file = (name: string) => decodeToPcm(asterisk(name));

  beforeAll(async () => {
    // One batch decoder: every request below shares it.
    engine = new PocketsphinxEngine({ poolSize: 1, warmStreams: 0, secondPass: false });
    recognizer = await engine.load('en-us');
  }, 60_000);
  afterAll(() => engine.close());

  it('recognises words the dictionary lacks only with context, written as the terms give them', async () => {
    // "You are now unmuted." / "Congratulations ... a PBX ..." (Allison Smith, Asterisk prompts).
    const before = words(await recognizer.transcribe(file('conf-unmuted')));
    expect(before).not.toMatch(/unmuted/i);
    const biased = words(await recognizer.transcribe(file('conf-unmuted'), { context: { terms: ['unmuted'], text: '' } }));
    expect(biased).toMatch(/\bunmuted\b/);
    const pbx = words(await recognizer.transcribe(file('demo-congrats'), { context: { terms: ['PBX', 'Digium'], text: '' } }));
    expect(pbx).toMatch(/\bPBX\b/);
    expect(words(await recognizer.transcribe(file('demo-congrats')))).not.toMatch(/pbx/i);
  }, 600_000);

  it('leaves requests without context as they were on a decoder that served biased ones', async () => {
    const clips = ['conf-unmuted', 'conf-now-unmuted', 'vm-undelete'];
    const plain = async () => Promise.all(clips.map(async (c) => words(await recognizer.transcribe(file(c)))));
    const first = await plain();
    for (const [c, terms] of [
      ['conf-now-unmuted', ['unmuted', 'unmute']],
      ['vm-undelete', ['undelete', 'undeleted']],
      ['conf-unmuted', ['Soniox']],
    ] as const)
      await recognizer.transcribe(file(c), { context: { terms: [...terms], text: 'You are now unmuted. Press 1 to undelete.' } });
    expect(await plain()).toEqual(first);
    // Two contexts taking turns on the decoder (each kept beside the other) give what each gives alone.
    const a = { terms: ['unmuted'], text: '' };
    const b = { terms: ['PBX', 'Digium'], text: 'Asterisk' };
    const firstA = words(await recognizer.transcribe(file('conf-now-unmuted'), { context: a }));
    const firstB = words(await recognizer.transcribe(file('conf-unmuted'), { context: b }));
    expect(words(await recognizer.transcribe(file('conf-now-unmuted'), { context: a }))).toBe(firstA);
    expect(words(await recognizer.transcribe(file('conf-unmuted'), { context: b }))).toBe(firstB);
    // And a later context does not inherit an earlier one's words.
    const other = words(await recognizer.transcribe(file('conf-now-unmuted'), { context: { terms: ['Kubernetes'], text: '' } }));
    expect(other).not.toMatch(/unmuted|undelete/);
  }, 420_000);

  it('biases a live session and its second passes', async () => {
    const two = new PocketsphinxEngine({ poolSize: 1, warmStreams: 0 });
    try {
      const live = await two.load('en-us');
      const pcm = execFileSync('ffmpeg', ['-v', 'error', '-i', asterisk('conf-unmuted'), '-f', 's16le', '-ac', '1', '-ar', '16000', '-']);
      const session = await live.stream({ context: { terms: ['unmuted'], text: '' } });
      const finals: string[] = [];
      session.on('final', (t) => finals.push(words(t)));
      for (let off = 0; off < pcm.length; off += 640) await session.write(pcm.subarray(off, off + 640));
      await session.write(Buffer.alloc(32_000));
      await session.end();
      expect(finals.join(' ')).toMatch(/\bunmuted\b/);
    } finally {
      await two.close();
    }
  }, 300_000);
});
