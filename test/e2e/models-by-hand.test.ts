// A model folder copied into a running server's models directory by hand, with no command and no request to tell the
// server: the node's poll sees the directory's listing change, and serves the model without a restart (listed by
// GET /v1/models, and it transcribes); a folder seen half-copied (its model file cut short) is served once the copy
// completes in place; a folder removed by hand leaves the list the same way. The model is a tiny CTC graph built at
// test time that hears "yes" wherever the audio is loud (test/fixtures/sherpa-models.ts).
import { appendFileSync, cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeEnergyCtcModel } from '../fixtures/sherpa-models.js';
import { logLines, makeSpeech, type Parlance, settledTranscription, startParlance, tempDir, type TranscriptBody, uploadFile, waitFor } from '../harness.js';

const root = tempDir('parlance-models-by-hand-');
const dataDir = path.join(root, 'data');
const models = path.join(dataDir, 'models');
let s: Parlance;
let speech: string;

/** A whole model folder outside the models directory, to copy in. */
function modelFolder(name: string, id: string): string {
  const dir = path.join(root, 'made', name);
  mkdirSync(dir, { recursive: true });
  writeEnergyCtcModel(dir);
  const manifest = { id, family: 'stt-offline', type: 'nemo-ctc', files: { model: 'model.onnx', tokens: 'tokens.txt' }, languages: ['en'] };
  writeFileSync(path.join(dir, 'parlance-model.json'), JSON.stringify(manifest));
  return dir;
}

beforeAll(async () => {
  mkdirSync(models, { recursive: true });
  speech = await makeSpeech(path.join(root, 'one.wav'), 'The birch canoe slid on the smooth planks.', { padSeconds: 1 });
  s = await startParlance({ dataDir, keepDataDir: true, env: { PARLANCE_LOG_LEVEL: 'info', PARLANCE_MODEL_SYNC_SECONDS: '0.5' } });
}, 60_000);

afterAll(async () => {
  await s?.stop();
  rmSync(root, { recursive: true, force: true });
});

const listed = async () => ((await (await s.request('/v1/models')).json()) as { models: { id: string }[] }).models.map((m) => m.id);

async function transcribe(model: string): Promise<string> {
  const fileId = await uploadFile(s, speech);
  const res = await s.request('/v1/transcriptions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, file_id: fileId, enable_text_formatting: false }),
  });
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as { id: string };
  const job = await settledTranscription(s, id, 60_000);
  expect(job.status, job.error_message ?? '').toBe('completed');
  return ((await (await s.request(`/v1/transcriptions/${id}/transcript`)).json()) as TranscriptBody).text;
}

describe('a model folder copied into the models directory by hand', () => {
  it('is served without a restart, and leaves the lists once its folder is removed by hand', async () => {
    expect(await listed()).not.toContain('hand-yes-v1');
    cpSync(modelFolder('yes', 'hand-yes-v1'), path.join(models, 'hand-yes'), { recursive: true });
    await waitFor(listed, (ids) => ids.includes('hand-yes-v1'), 30_000);
    expect(logLines(s).find((l) => l.msg === 'model offered' && l.model === 'hand-yes-v1')).toBeDefined();
    expect(new Set((await transcribe('hand-yes-v1')).split(/\s+/))).toEqual(new Set(['yes']));

    rmSync(path.join(models, 'hand-yes'), { recursive: true, force: true });
    await waitFor(listed, (ids) => !ids.includes('hand-yes-v1'), 30_000);
    const gone = await s.request('/v1/transcriptions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'hand-yes-v1', file_id: await uploadFile(s, speech) }),
    });
    expect(gone.status).toBe(400);
  }, 120_000);

  it('is served once a copy seen half done completes, though the folder listing no longer changes', async () => {
    const made = modelFolder('half', 'hand-half-v1');
    const whole = readFileSync(path.join(made, 'model.onnx'));
    const dir = path.join(models, 'hand-half');
    mkdirSync(dir);
    // The manifest last, so that the only fault the server can see is the cut.
    const cut = Math.floor(whole.length / 2);
    writeFileSync(path.join(dir, 'model.onnx'), whole.subarray(0, cut));
    for (const f of ['tokens.txt', 'parlance-model.json']) cpSync(path.join(made, f), path.join(dir, f));
    // The server looks, and cannot read the folder yet: the models served stay as they were.
    const cutShort = () =>
      logLines(s).filter((l) => String(l.msg).startsWith('the models directory cannot be read') && /model\.onnx is cut short/.test(String(l.err)));
    await waitFor(
      async () => cutShort(),
      (lines) => lines.length > 0,
      30_000,
    );
    expect(await listed()).not.toContain('hand-half-v1');
    // The rest of the file, written in place: the folder's listing is as it was; the server still looks again.
    appendFileSync(path.join(dir, 'model.onnx'), whole.subarray(cut));
    await waitFor(listed, (ids) => ids.includes('hand-half-v1'), 30_000);
    expect(new Set((await transcribe('hand-half-v1')).split(/\s+/))).toEqual(new Set(['yes']));
    // It said so once, not at each look.
    expect(cutShort()).toHaveLength(1);
  }, 120_000);
});
