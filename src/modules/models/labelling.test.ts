// LabellingModels: the speaker-embedding model in use follows the models directory as it is handed over; the diarizer
// sends each call to the embedding or BIC diarizer of the moment; a model taken out of use still serves those that
// hold it, and is closed only once nothing used it for RETIRED_IDLE_MS; with an idle time set, the model in use is
// unloaded once idle and loaded again by the next call on the same object, a call made during the unload included.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import path from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { writeSpectrumEmbeddingModel } from '../../../test/fixtures/sherpa-models.js';
import { tempDir } from '../../../test/harness.js';
import { readManifest } from '../../engines/model-dir/manifest.js';
import { LabellingModels, RETIRED_IDLE_MS } from './labelling.js';

const root = tempDir('parlance-labelling-');
afterAll(() => rmSync(root, { recursive: true, force: true }));

function spectrumModel(name: string) {
  const dir = path.join(root, name);
  mkdirSync(dir, { recursive: true });
  writeSpectrumEmbeddingModel(dir);
  const manifest = { id: `${name}-v1`, family: 'speaker-embedding', type: 'embedding', files: { model: 'model.onnx' }, languages: ['en'] };
  writeFileSync(path.join(dir, 'parlance-model.json'), JSON.stringify(manifest));
  return readManifest(dir);
}

function logger() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level: 'info' }, stream), lines };
}

const noise = () => Int16Array.from({ length: 16000 }, (_, i) => Math.round(Math.sin(i / 3) * 8000 + ((i * 7919) % 2000) - 1000));

describe('LabellingModels', () => {
  it('switches the diarizer with the models directory, and closes a model taken out of use once idle', async () => {
    const { log, lines } = logger();
    const labelling = new LabellingModels([], { log, jobLog: () => {} });
    try {
      expect(labelling.languageId()).toBeUndefined();
      expect(labelling.speakerEmbeddings()).toBeUndefined();
      expect(labelling.diarizer.name).toBe('bic');

      const model = spectrumModel('spectrum');
      labelling.update([model]);
      const held = labelling.speakerEmbeddings()!;
      expect(held.modelId).toBe('spectrum-v1');
      expect(labelling.diarizer.name).toBe('embedding:spectrum-v1');
      expect(lines.find((l) => l.msg === 'speaker diarization of files with speaker embeddings')).toMatchObject({ model: 'spectrum-v1' });
      // The same folder handed again changes nothing.
      labelling.update([model]);
      expect(labelling.speakerEmbeddings()).toBe(held);

      labelling.update([]);
      expect(labelling.speakerEmbeddings()).toBeUndefined();
      expect(labelling.diarizer.name).toBe('bic');
      // Work that holds the model goes on with it; it is not closed while recently used.
      expect((await held.embed(noise())).length).toBeGreaterThan(0);
      await labelling.sweep(Date.now());
      expect(lines.some((l) => l.msg === 'labelling model no longer in use unloaded')).toBe(false);
      await labelling.sweep(Date.now() + RETIRED_IDLE_MS);
      expect(lines.find((l) => l.msg === 'labelling model no longer in use unloaded')).toMatchObject({ model: 'spectrum-v1' });
    } finally {
      await labelling.close();
    }
  }, 60_000);

  it('unloads the model in use once idle, and loads it again on the next call', async () => {
    const { log, lines } = logger();
    const model = spectrumModel('idle-spectrum');
    const labelling = new LabellingModels([model], { log, jobLog: () => {}, idleUnloadMs: 1000 });
    const unloads = () => lines.filter((l) => l.msg === 'idle model unloaded' && l.model === 'idle-spectrum-v1').length;
    try {
      const held = labelling.speakerEmbeddings()!;
      // Loaded on first use only.
      expect(labelling.loadedCount()).toBe(0);
      expect((await held.embed(noise())).length).toBeGreaterThan(0);
      expect(labelling.loaded('idle-spectrum-v1')).toBe(true);
      expect(labelling.loadedCount()).toBe(1);

      await labelling.sweep(Date.now());
      expect(unloads()).toBe(0);
      await labelling.sweep(Date.now() + 1000);
      expect(unloads()).toBe(1);
      expect(labelling.loaded('idle-spectrum-v1')).toBe(false);
      expect(labelling.loadedCount()).toBe(0);

      // The object handed out before keeps working: it loads the model again.
      expect((await held.embed(noise())).length).toBeGreaterThan(0);
      expect(labelling.loaded('idle-spectrum-v1')).toBe(true);
      // A call made while the unload is under way does not fail either.
      const sweeping = labelling.sweep(Date.now() + 1000);
      const during = held.embed(noise());
      await sweeping;
      expect((await during).length).toBeGreaterThan(0);
      expect(unloads()).toBe(2);
      expect(labelling.loaded('idle-spectrum-v1')).toBe(true);
    } finally {
      await labelling.close();
    }
  }, 60_000);
});
