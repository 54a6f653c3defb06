// Narrowband adaptation on real recordings: the spectrum test tells Debian's 8 kHz telephone prompts from its 16 kHz
// recordings, and the transform `make setup` estimated (from the tuning half only) makes the recognizer lose fewer
// words on held-out telephone prompts while leaving wideband speech exactly as it was.
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { highBandShare } from '../../../audio/bandwidth.js';
import { decodeToBuffer } from '../../../audio/decode.js';
import { asteriskEnClips, splitOf, testdataClips, werOf, type RealClip } from '../../../../test/real-speech.js';
import type { Token } from '../interface.js';
import { PocketsphinxEngine, type PocketsphinxRecognizer } from './engine.js';
import { builtNarrowbandTransform, identityTransformFor, NARROWBAND_MAX_HIGH_BAND_SHARE } from './narrowband.js';

const samplesOf = async (file: string): Promise<Int16Array> => {
  const buf = await decodeToBuffer(file);
  return new Int16Array(buf.buffer, buf.byteOffset, buf.length >> 1);
};
// Held-out prompts of a few words each, in a fixed order (every 16th, so the test stays short).
const heldOut = asteriskEnClips()
  .filter((c) => splitOf(c.file) === 'held-out')
  .filter((_, i) => i % 16 === 0);
const wideband = testdataClips();

describe('narrowband detection', () => {
  it('finds every telephone prompt narrowband and every 16 kHz recording wideband', async () => {
    expect(heldOut.length).toBeGreaterThan(10);
    for (const c of heldOut) expect(highBandShare(await samplesOf(c.file)), c.file).toBeLessThan(NARROWBAND_MAX_HIGH_BAND_SHARE);
    for (const c of wideband) expect(highBandShare(await samplesOf(c.file)), c.file).toBeGreaterThan(NARROWBAND_MAX_HIGH_BAND_SHARE);
  });

  it('says nothing about less than one frame', () => {
    expect(highBandShare(new Int16Array(100))).toBeNaN();
  });
});

describe('identity transform', () => {
  it('has the shape of the built transform, with A = I, b = 0 and unit variance scaling', () => {
    const built = builtNarrowbandTransform();
    expect(built, 'make setup builds build/adaptation/en-us-narrowband.mllr').toBeDefined();
    const numbers = (f: string) => readFileSync(f, 'utf8').split(/\s+/).filter(Boolean).map(Number);
    const a = numbers(built!);
    const id = numbers(identityTransformFor(built!));
    expect(id.length).toBe(a.length);
    expect(id.slice(0, 3)).toEqual([1, 3, 13]);
    // First stream: 13 rows of A, then b, then h.
    const rows = id.slice(3, 3 + 13 * 13);
    rows.forEach((v, i) => expect(v).toBe(Math.floor(i / 13) === i % 13 ? 1 : 0));
    expect(id.slice(3 + 169, 3 + 182)).toEqual(new Array(13).fill(0));
    expect(id.slice(3 + 182, 3 + 195)).toEqual(new Array(13).fill(1));
  });

  it('refuses a file that is not a transform', () => {
    expect(() => identityTransformFor('/usr/share/pocketsphinx/model/en-us/en-us/feat.params')).toThrow(/not an MLLR transform/);
  });
});

describe('decoding with the narrowband adaptation', () => {
  let adapted: PocketsphinxEngine;
  let plain: PocketsphinxEngine;
  let withIt: PocketsphinxRecognizer;
  let without: PocketsphinxRecognizer;
  const options = { secondPass: false as const, warmStreams: 0, poolSize: 1 };

  beforeAll(async () => {
    expect(existsSync(builtNarrowbandTransform() ?? '')).toBe(true);
    adapted = new PocketsphinxEngine(options);
    plain = new PocketsphinxEngine({ ...options, narrowbandTransform: false });
    [withIt, without] = await Promise.all([adapted.load('en-us'), plain.load('en-us')]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([adapted?.close(), plain?.close()]);
  });

  const transcribe = async (r: PocketsphinxRecognizer, c: RealClip): Promise<Token[]> => {
    const pcm = await decodeToBuffer(c.file);
    return r.transcribe(
      (async function* () {
        yield pcm;
      })(),
      { language: 'en' },
    );
  };
  /** The clip as a live session in 20 ms pieces: the streaming decoder's own final words (no second pass). */
  const live = async (r: PocketsphinxRecognizer, c: RealClip): Promise<Token[]> => {
    const pcm = await decodeToBuffer(c.file);
    const session = await r.stream({ language: 'en' });
    const finals: Token[] = [];
    session.on('final', (t) => finals.push(...t));
    for (let off = 0; off < pcm.length; off += 640) await session.write(pcm.subarray(off, off + 640));
    await session.end();
    return finals;
  };
  const words = (tokens: Token[]) => tokens.map((t) => t.text).join(' ');
  /** Word errors on the held-out prompts with the adapted engine and without, each decoded by `decode`. */
  const errorsOf = async (decode: (r: PocketsphinxRecognizer, c: RealClip) => Promise<Token[]>) => {
    const a: { reference: string; text: string }[] = [];
    const b: { reference: string; text: string }[] = [];
    for (const c of heldOut) {
      const [x, y] = await Promise.all([decode(withIt, c), decode(without, c)]);
      a.push({ reference: c.reference, text: words(x) });
      b.push({ reference: c.reference, text: words(y) });
    }
    return { adapted: werOf(a).errors, plain: werOf(b).errors };
  };

  it('loses fewer words of held-out telephone prompts', async () => {
    const e = await errorsOf(transcribe);
    // Measured on the whole held-out half: 73.9 % → 47.4 % (docs/benchmarks-history.md); here on every 16th prompt.
    expect(e.adapted).toBeLessThan(e.plain);
  }, 300_000);

  it('leaves wideband speech as it was, also after narrowband audio on the same decoder', async () => {
    await transcribe(withIt, heldOut[0]!); // the decoder now holds the narrowband transform
    for (const c of wideband.slice(0, 2)) {
      const [x, y] = await Promise.all([transcribe(withIt, c), transcribe(without, c)]);
      expect(words(x)).toBe(words(y));
    }
  }, 300_000);

  it('live sessions: the streaming decoder loses fewer words of held-out telephone prompts', async () => {
    const e = await errorsOf(live);
    console.info(`live telephone prompts: ${e.adapted} word errors adapted, ${e.plain} without`);
    expect(e.adapted).toBeLessThan(e.plain);
  }, 300_000);

  it('live sessions: wideband speech gets the words of an unadapted decoder, also after telephone audio', async () => {
    await live(withIt, heldOut[0]!);
    for (const c of wideband.slice(0, 2)) {
      const [x, y] = await Promise.all([live(withIt, c), live(without, c)]);
      expect(words(x)).toBe(words(y));
    }
  }, 300_000);
});
