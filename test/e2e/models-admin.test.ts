// Models managed over HTTP (/v1/admin/models, keys with models:admin), end to end against a started server: archives
// built at test time from the real streaming model beside the project (and a tiny Piper voice) are served by a local
// HTTP server; a pull by catalogue name moves downloading (with progress) → installing → ready and the model is served
// at once, with no restart, over /v1/models and a live session; concurrent pulls of a source are one job; aliases move
// in one step; a removal takes the model out of the lists at once while a session that holds it finishes on it. Bad
// input (an unknown catalogue name, a private host, a wrong checksum, an archive with no model, a file over the size
// cap) is accepted (202) and its record ends failed with its error type, leaving the models directory as it was; a full
// disk too; a malformed request (a path outside the import folder, a bad id) is 400.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { SttReceivedFrame } from '../../src/wire/stt-frames.js';
import { canMountTmpfs, mountTmpfs, unmount } from '../disk-full.js';
import { writeToneVitsModel } from '../fixtures/sherpa-models.js';
import { errorBody, logLines, type Parlance, startParlance, tempDir, waitFor } from '../harness.js';
import { hasRealModel, REAL_STREAMING_MODEL, realModelClips } from '../real-model.js';

const root = tempDir('parlance-models-admin-');
const serveDir = path.join(root, 'served');
const importDir = path.join(root, 'import');
const MAX_BYTES = 16 * 1024 * 1024;
const KWS = 'kws-zipformer-v1';
let server: Server;
let base: string;
let kwsSha: string;
let catalogueFile: string;
const hits = new Map<string, number>();

/** GET /<mode>/<file>: `plain` serves the file; `slow` sends it in 20 pieces 100 ms apart (a download in progress). */
function serve(req: IncomingMessage, res: ServerResponse): void {
  const url = req.url ?? '/';
  hits.set(url, (hits.get(url) ?? 0) + 1);
  const { pathname } = new URL(url, 'http://x');
  const mode = pathname.split('/')[1];
  const file = path.join(serveDir, path.basename(pathname));
  if (!existsSync(file)) return void res.writeHead(404).end();
  const body = readFileSync(file);
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(body.length) });
  if (mode !== 'slow') return void res.end(body);
  const piece = Math.ceil(body.length / 20);
  let at = 0;
  const next = () => {
    res.write(body.subarray(at, at + piece));
    at += piece;
    if (at >= body.length) res.end();
    else setTimeout(next, 100);
  };
  next();
}

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
const tar = (archive: string, dir: string, folder: string, flags = '-czf') => execFileSync('tar', [flags, archive, '-C', dir, folder]);

beforeAll(async () => {
  mkdirSync(serveDir, { recursive: true });
  mkdirSync(importDir, { recursive: true });
  if (hasRealModel) {
    tar(path.join(serveDir, 'kws.tar.gz'), path.dirname(REAL_STREAMING_MODEL), path.basename(REAL_STREAMING_MODEL));
    kwsSha = sha256(path.join(serveDir, 'kws.tar.gz'));
    tar(path.join(importDir, 'kws-local.tar.gz'), path.dirname(REAL_STREAMING_MODEL), path.basename(REAL_STREAMING_MODEL));
  }
  // A Piper voice, its espeak-ng-data copied in (-h: the fixture links the system's).
  const voice = path.join(root, 'pack-voice', 'tone-voice');
  mkdirSync(voice, { recursive: true });
  writeToneVitsModel(voice, { sampleRate: 16000 });
  execFileSync('tar', ['-czhf', path.join(serveDir, 'tone-voice.tar.gz'), '-C', path.dirname(voice), 'tone-voice']);
  // An archive with no model in it; a file over the size cap.
  const tokensOnly = path.join(root, 'pack-tokens', 'tokens-only');
  mkdirSync(tokensOnly, { recursive: true });
  writeFileSync(path.join(tokensOnly, 'tokens.txt'), '<blk> 0\n');
  tar(path.join(serveDir, 'tokens-only.tar.gz'), path.dirname(tokensOnly), 'tokens-only');
  writeFileSync(path.join(serveDir, 'huge.tar.gz'), randomBytes(MAX_BYTES + 1024));

  server = createServer(serve);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kws = { title: 'KWS Zipformer', family: 'stt-streaming', type: 'transducer', languages: ['en'] };
  catalogueFile = path.join(root, 'catalogue.json');
  writeFileSync(
    catalogueFile,
    JSON.stringify([
      { ...kws, name: 'kws-zipformer', url: `${base}/slow/kws.tar.gz`, id: KWS, sha256: kwsSha },
      { ...kws, name: 'kws-wrong-sum', url: `${base}/plain/kws.tar.gz?wrong`, id: 'kws-wrong-v1', sha256: '0'.repeat(64) },
      { ...kws, name: 'kws-private', url: `http://127.0.0.2:${base.split(':')[2]}/plain/kws.tar.gz`, id: 'kws-private-v1' },
      { ...kws, name: 'kws-at-start', url: `${base}/plain/kws.tar.gz?start`, id: 'kws-start-v1' },
    ]),
  );
});

afterAll(async () => {
  await new Promise((r) => server?.close(r));
  rmSync(root, { recursive: true, force: true });
});

interface ModelRecord {
  id: string;
  status: string;
  source: string | null;
  family: string;
  type: string;
  aliases: string[];
  size_bytes: number | null;
  sha256: string | null;
  progress: { bytes_received: number; bytes_total: number | null } | null;
  error_type: string | null;
  error_message: string | null;
  loaded: boolean;
}

const json = { 'content-type': 'application/json' };
const pcm = (file: string) => execFileSync('ffmpeg', ['-v', 'error', '-i', file, '-f', 's16le', '-ac', '1', '-ar', '16000', 'pipe:1'], { maxBuffer: 1 << 26 });

function admin(s: Parlance) {
  return {
    pull: (body: Record<string, unknown>, key?: string) => s.request('/v1/admin/models', { method: 'POST', headers: json, body: JSON.stringify(body), key }),
    get: async (id: string) => (await s.request(`/v1/admin/models/${id}`)).json() as Promise<ModelRecord>,
    settled: (id: string) =>
      waitFor(
        async () => (await s.request(`/v1/admin/models/${id}`)).json() as Promise<ModelRecord>,
        (r) => r.status === 'ready' || r.status === 'failed',
        120_000,
      ),
    remove: (id: string) => s.request(`/v1/admin/models/${id}`, { method: 'DELETE' }),
    aliases: (id: string, aliases: string[]) =>
      s.request(`/v1/admin/models/${id}/aliases`, { method: 'PUT', headers: json, body: JSON.stringify({ aliases }) }),
  };
}

const sttModels = async (s: Parlance) =>
  ((await (await s.request('/v1/models')).json()) as { models: { id: string; transcription_mode: string; aliased_model_id: string | null }[] }).models;

/** The models directory's entries (the download area included), as the server's disk has them. */
const folderOf = (dataDir: string) =>
  existsSync(path.join(dataDir, 'models')) ? readdirSync(path.join(dataDir, 'models'), { recursive: true }).map(String).sort() : [];

/** A live session on `model`: the configuration and `first` of the audio; `rest()` sends the remainder and the end. */
async function liveSession(s: Parlance, model: string, audio: Buffer, first: number) {
  const ws = new WebSocket(`${s.url.replace('http', 'ws')}/transcribe-websocket`);
  const frames: SttReceivedFrame[] = [];
  let gotFrame!: () => void;
  const firstFrame = new Promise<void>((r) => (gotFrame = r));
  const done = new Promise<void>((resolve) =>
    ws.on('message', (m: Buffer) => {
      const f = JSON.parse(m.toString()) as SttReceivedFrame;
      frames.push(f);
      gotFrame();
      if (f.finished || f.error_type) resolve();
    }),
  );
  await new Promise((r) => ws.once('open', r));
  ws.send(JSON.stringify({ api_key: s.apiKey, model, audio_format: 'pcm_s16le', sample_rate: 16000, num_channels: 1 }));
  const send = (from: number, to: number) => {
    for (let off = from; off < to; off += 3200) ws.send(audio.subarray(off, Math.min(off + 3200, to)));
  };
  send(0, first);
  return {
    frames,
    firstFrame,
    async rest() {
      send(first, audio.length);
      ws.send('');
      await done;
      ws.close();
      return frames;
    },
  };
}

const finalText = (frames: SttReceivedFrame[]) =>
  frames
    .flatMap((f) => f.tokens.filter((t) => t.is_final && !t.text.startsWith('<')).map((t) => t.text))
    .join('')
    .trim()
    .toLowerCase();

describe.skipIf(!hasRealModel)('models over HTTP', () => {
  let s: Parlance;
  let a: ReturnType<typeof admin>;

  beforeAll(async () => {
    s = await startParlance({
      env: {
        PARLANCE_LOG_LEVEL: 'info',
        PARLANCE_MODELS_CATALOGUE: catalogueFile,
        PARLANCE_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
        PARLANCE_MODELS_IMPORT_DIR: importDir,
        PARLANCE_MODEL_MAX_BYTES: String(MAX_BYTES),
      },
    });
    a = admin(s);
  }, 90_000);

  afterAll(async () => {
    await s?.stop();
  });

  it('refuses a key without models:admin with 403 permission_denied, a read-only key too; the first-start key has it', async () => {
    const plain = (await s.admin<{ api_key: string }>('create-key', '--project', s.projectId)).api_key;
    const readOnly = (await s.admin<{ api_key: string }>('create-key', '--project', s.projectId, '--read-only')).api_key;
    const granted = (await s.admin<{ api_key: string }>('create-key', '--project', s.projectId, '--permission', 'models:admin')).api_key;
    for (const key of [plain, readOnly]) {
      for (const [method, url, body] of [
        ['GET', '/v1/admin/models', undefined],
        ['POST', '/v1/admin/models', JSON.stringify({ source: 'kws-zipformer' })],
        ['GET', `/v1/admin/models/${KWS}`, undefined],
        ['DELETE', `/v1/admin/models/${KWS}`, undefined],
        ['PUT', `/v1/admin/models/${KWS}/aliases`, JSON.stringify({ aliases: [] })],
      ] as const) {
        const res = await s.request(url, { method, headers: json, body, key });
        const err = await errorBody(res);
        expect([res.status, err.error_type], `${method} ${url}`).toEqual([403, 'permission_denied']);
      }
    }
    expect((await s.request('/v1/admin/models', { key: granted })).status).toBe(200);
    const listed = (await (await s.request('/v1/admin/models')).json()) as { models: ModelRecord[]; catalogue: { name: string; installed: boolean }[] };
    expect(listed.models).toEqual([]);
    expect(listed.catalogue.find((e) => e.name === 'kws-zipformer')).toMatchObject({ installed: false });
    // Nothing was pulled by the refused requests.
    expect(folderOf(s.dataDir)).toEqual([]);
  });

  it('pulls a catalogue model: downloading with progress, then installing, then ready, and serves it at once', async () => {
    const res = await a.pull({ source: 'kws-zipformer' });
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ id: KWS, status: 'downloading', source: 'kws-zipformer', family: 'stt-streaming', type: 'transducer' });
    const during = await waitFor(
      () => a.get(KWS),
      (r) => r.status !== 'downloading' || (r.progress?.bytes_received ?? 0) > 0,
      60_000,
      50,
    );
    expect(during.status).toBe('downloading');
    expect(during.progress!.bytes_total).toBe(statSync(path.join(serveDir, 'kws.tar.gz')).size);
    expect(during.progress!.bytes_received).toBeLessThanOrEqual(during.progress!.bytes_total!);
    const ready = await a.settled(KWS);
    expect(ready).toMatchObject({ id: KWS, status: 'ready', sha256: kwsSha, error_type: null, progress: null });
    expect(ready.size_bytes).toBeGreaterThan(1_000_000);
    // No restart: the model lists offer it, in both modes, and a live session recognises speech with it.
    const offered = (await sttModels(s)).filter((m) => m.id === KWS).map((m) => m.transcription_mode);
    expect(offered.sort()).toEqual(['async', 'real_time']);
    const clip = realModelClips()[0]!;
    const session = await liveSession(s, KWS, pcm(clip.file), 0);
    const text = finalText(await session.rest());
    const heard = clip.reference.split(/\s+/).filter((w) => text.includes(w));
    expect(heard.length).toBeGreaterThan(clip.reference.split(/\s+/).length / 2);
    expect((await a.get(KWS)).loaded).toBe(true);
    const listed = (await (await s.request('/v1/admin/models')).json()) as { catalogue: { name: string; installed: boolean }[] };
    expect(listed.catalogue.find((e) => e.name === 'kws-zipformer')).toMatchObject({ installed: true });
    // A second pull of an installed model is refused.
    expect((await errorBody(await a.pull({ source: 'kws-zipformer' }))).error_type).toBe('invalid_request');
  }, 180_000);

  it('runs concurrent pulls of one source as one job', async () => {
    const body = { source: `${base}/plain/kws.tar.gz?twice`, family: 'stt-streaming', type: 'transducer', id: 'kws-twice-v1' };
    const [r1, r2] = await Promise.all([a.pull(body), a.pull(body)]);
    expect([r1.status, r2.status]).toEqual([202, 202]);
    expect([((await r1.json()) as ModelRecord).id, ((await r2.json()) as ModelRecord).id]).toEqual(['kws-twice-v1', 'kws-twice-v1']);
    expect(await a.settled('kws-twice-v1')).toMatchObject({ status: 'ready' });
    expect(hits.get('/plain/kws.tar.gz?twice')).toBe(1);
    expect((await a.remove('kws-twice-v1')).status).toBe(204);
    expect(existsSync(path.join(s.dataDir, 'models', 'kws-twice-v1'))).toBe(false);
  }, 180_000);

  it('moves aliases in one step, and refuses a claim that cannot hold', async () => {
    const res = await a.aliases(KWS, ['stt-rt-v4', 'my-live']);
    expect(res.status).toBe(200);
    expect(((await res.json()) as ModelRecord).aliases).toEqual(['stt-rt-v4', 'my-live']);
    const models = await sttModels(s);
    expect(models.find((m) => m.id === 'stt-rt-v4')).toMatchObject({ aliased_model_id: KWS, transcription_mode: 'real_time' });
    expect(models.filter((m) => m.id === 'my-live').map((m) => m.aliased_model_id)).toEqual([KWS, KWS]);
    // The id of another model, and an id that is not one.
    for (const aliases of [['parlance-async-en-v1'], ['no spaces']]) {
      const bad = await a.aliases(KWS, aliases);
      expect([bad.status, (await errorBody(bad)).error_type]).toEqual([400, 'invalid_request']);
    }
    const unknown = await a.aliases('nope-v1', []);
    expect([unknown.status, (await errorBody(unknown)).error_type]).toEqual([404, 'model_not_found']);
    expect((await a.aliases(KWS, [])).status).toBe(200);
    expect((await sttModels(s)).find((m) => m.id === 'my-live')).toBeUndefined();
    // stt-rt-v4 is the built-in model's again.
    expect((await sttModels(s)).find((m) => m.id === 'stt-rt-v4')).toMatchObject({ aliased_model_id: 'parlance-rt-en-v1' });
  });

  it('ends bad pulls failed with their error type, and leaves the models directory as it was', async () => {
    const before = folderOf(s.dataDir);
    const refused = async (body: Record<string, unknown>) => {
      const res = await a.pull(body);
      const err = await errorBody(res);
      return [res.status, err.error_type, err.validation_errors[0]?.location];
    };
    expect(await refused({ source: '../served/kws.tar.gz' })).toEqual([400, 'invalid_request', 'source']);
    expect(await refused({ source: path.join(serveDir, 'kws.tar.gz') })).toEqual([400, 'invalid_request', 'source']);
    expect(await refused({ source: `${base}/plain/kws.tar.gz` })).toEqual([400, 'invalid_request', 'source']); // no family and type
    expect(await refused({ source: 'kws-zipformer', sha256: 'abc' })).toEqual([400, 'invalid_request', 'sha256']);
    expect(await refused({ source: 'kws-zipformer', type: 'whisper' })).toEqual([400, 'invalid_request', 'type']);
    expect(await refused({ source: 'kws-zipformer', id: '../escape-v1' })).toEqual([400, 'invalid_request', 'id']);
    expect(await refused({ source: 'kws-zipformer', aliases: ['parlance-rt-en-v1', 'bad alias'] })).toEqual([400, 'invalid_request', 'aliases.1']);
    const failures: [Record<string, unknown>, string, string, RegExp][] = [
      [{ source: 'no-such-model' }, 'no-such-model-v1', 'model_not_available', /unknown catalogue name "no-such-model"/i],
      [{ source: 'kws-private' }, 'kws-private-v1', 'file_download_blocked', /private|blocked|reserved/i],
      [{ source: 'kws-wrong-sum' }, 'kws-wrong-v1', 'file_download_failed', /checksum mismatch/],
      [
        { source: `${base}/plain/tokens-only.tar.gz`, family: 'stt-streaming', type: 'transducer' },
        'tokens-only-v1',
        'invalid_model_archive',
        /encoder|joiner|decoder/,
      ],
      [{ source: `${base}/plain/huge.tar.gz`, family: 'stt-offline', type: 'whisper' }, 'huge-v1', 'file_download_failed', /larger than/],
      [{ source: `${base}/plain/missing.tar.gz`, family: 'stt-offline', type: 'whisper' }, 'missing-v1', 'file_download_failed', /404/],
    ];
    for (const [body, id, type, message] of failures) {
      const res = await a.pull(body);
      expect(res.status, id).toBe(202);
      const rec = await a.settled(id);
      expect(rec, id).toMatchObject({ status: 'failed', error_type: type });
      expect(rec.error_message).toMatch(message);
      expect(folderOf(s.dataDir), id).toEqual(before);
    }
    // A failed pull is listed until removed; pulled again, it is a new attempt.
    const listed = (await (await s.request('/v1/admin/models')).json()) as { models: ModelRecord[] };
    expect(listed.models.filter((m) => m.status === 'failed').map((m) => m.id)).toEqual([
      'huge-v1',
      'kws-private-v1',
      'kws-wrong-v1',
      'missing-v1',
      'no-such-model-v1',
      'tokens-only-v1',
    ]);
    expect((await a.remove('huge-v1')).status).toBe(204);
    expect((await s.request('/v1/admin/models/huge-v1')).status).toBe(404);
    expect((await a.pull({ source: 'kws-wrong-sum' })).status).toBe(202);
    expect(await a.settled('kws-wrong-v1')).toMatchObject({ status: 'failed', error_type: 'file_download_failed' });
    // An unknown name pulled again (with an id of its own) fails the same way, and counts as a pull of that outcome.
    const again = await a.pull({ source: 'no-such-model', id: 'typo-v2' });
    expect(again.status).toBe(202);
    expect(await again.json()).toMatchObject({ id: 'typo-v2', status: 'failed', error_type: 'model_not_available', source: 'no-such-model' });
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    expect(metrics).toMatch(/^parlance_model_pulls_total\{outcome="model_not_available"\} 2$/m);
    expect(folderOf(s.dataDir)).toEqual(before);
  }, 120_000);

  it('cancels a pull under way when it is removed, leaving nothing behind; the id can be pulled again', async () => {
    const before = folderOf(s.dataDir);
    const body = { source: `${base}/slow/kws.tar.gz?cancel`, family: 'stt-streaming', type: 'transducer', id: 'kws-cancel-v1' };
    expect((await a.pull(body)).status).toBe(202);
    await waitFor(
      () => a.get('kws-cancel-v1'),
      (r) => r.status !== 'downloading' || (r.progress?.bytes_received ?? 0) > 0,
      60_000,
      50,
    );
    expect((await a.remove('kws-cancel-v1')).status).toBe(204);
    expect((await s.request('/v1/admin/models/kws-cancel-v1')).status).toBe(404);
    // Its job stops (or, had it finished installing meanwhile, takes the model out again).
    await waitFor(
      async () => logLines(s).some((l) => l.msg === 'cancelled model pull cleaned up' && l.model === 'kws-cancel-v1'),
      (ok) => ok,
      60_000,
    );
    expect(folderOf(s.dataDir)).toEqual(before);
    expect((await sttModels(s)).some((m) => m.id === 'kws-cancel-v1')).toBe(false);
    expect((await a.pull({ ...body, source: `${base}/plain/kws.tar.gz?again` })).status).toBe(202);
    expect(await a.settled('kws-cancel-v1')).toMatchObject({ status: 'ready', source: `${base}/plain/kws.tar.gz?again` });
    expect((await a.remove('kws-cancel-v1')).status).toBe(204);
  }, 180_000);

  it('installs an archive from the import folder by path', async () => {
    const res = await a.pull({ source: 'kws-local.tar.gz', family: 'stt-streaming', type: 'transducer', id: 'kws-local-v1' });
    expect(res.status).toBe(202);
    expect(await a.settled('kws-local-v1')).toMatchObject({ status: 'ready', source: 'kws-local.tar.gz' });
    expect((await sttModels(s)).some((m) => m.id === 'kws-local-v1')).toBe(true);
    expect((await a.remove('kws-local-v1')).status).toBe(204);
    expect((await sttModels(s)).some((m) => m.id === 'kws-local-v1')).toBe(false);
  }, 120_000);

  it('serves a voice pulled over HTTP at once', async () => {
    const res = await a.pull({ source: `${base}/plain/tone-voice.tar.gz`, family: 'tts', type: 'vits', id: 'tone-voice-v1', aliases: ['my-voice'] });
    expect(res.status).toBe(202);
    expect(await a.settled('tone-voice-v1')).toMatchObject({ status: 'ready', family: 'tts', aliases: ['my-voice'] });
    const tts = (await (await s.request('/v1/tts-models')).json()) as { models: { id: string; aliased_model_id: string | null; voices: { id: string }[] }[] };
    expect(tts.models.find((m) => m.id === 'tone-voice-v1')?.voices.map((v) => v.id)).toEqual(['tone-voice']);
    expect(tts.models.find((m) => m.id === 'my-voice')).toMatchObject({ aliased_model_id: 'tone-voice-v1' });
    const speech = await s.request('/tts', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ model: 'my-voice', language: 'en', voice: 'tone-voice', audio_format: 'pcm_s16le', text: 'Hello there.' }),
    });
    expect(speech.status).toBe(200);
    expect((await speech.arrayBuffer()).byteLength).toBeGreaterThan(1000);
    expect((await a.remove('tone-voice-v1')).status).toBe(204);
    const after = (await (await s.request('/v1/tts-models')).json()) as { models: { id: string }[] };
    expect(after.models.map((m) => m.id)).not.toContain('tone-voice-v1');
    expect(after.models.map((m) => m.id)).not.toContain('my-voice');
  }, 120_000);

  it('removes a model in use: out of the lists at once, the running session finishes on it, then it is unloaded', async () => {
    const clip = realModelClips()[0]!;
    const audio = pcm(clip.file);
    const session = await liveSession(s, KWS, audio, audio.length >> 1);
    await session.firstFrame;
    expect((await a.remove(KWS)).status).toBe(204);
    expect((await sttModels(s)).some((m) => m.id === KWS)).toBe(false);
    expect(existsSync(path.join(s.dataDir, 'models', KWS))).toBe(false);
    const refused = await liveSession(s, KWS, Buffer.alloc(3200), 0);
    const frames = await refused.rest();
    expect(frames.at(-1)).toMatchObject({ error_type: 'model_not_available' });
    // The session that holds the model goes on to its end, with the words of the whole clip.
    const text = finalText(await session.rest());
    expect(text.split(/\s+/).length).toBeGreaterThan(clip.reference.split(/\s+/).length / 2);
    await waitFor(
      async () => logLines(s).some((l) => l.msg === 'removed model unloaded' && l.model === KWS),
      (ok) => ok,
      30_000,
    );
    expect((await s.request(`/v1/admin/models/${KWS}`)).status).toBe(404);
  }, 120_000);
});

describe.skipIf(!hasRealModel)('PARLANCE_MODELS and PARLANCE_MODEL_IDLE_UNLOAD_SECONDS', () => {
  it('pulls a missing model at start (once), and unloads it when idle, loading it again on the next request', async () => {
    const dataDir = path.join(root, 'at-start');
    const env = {
      PARLANCE_LOG_LEVEL: 'info',
      PARLANCE_MODELS: 'kws-at-start',
      PARLANCE_MODELS_CATALOGUE: catalogueFile,
      PARLANCE_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
      PARLANCE_MODEL_IDLE_UNLOAD_SECONDS: '1',
    };
    let s = await startParlance({ dataDir, env });
    try {
      // Nobody asked over HTTP: the operator's list did.
      expect(await admin(s).settled('kws-start-v1')).toMatchObject({ status: 'ready', source: 'kws-at-start' });
      const clip = realModelClips()[0]!;
      const audio = pcm(clip.file);
      const hear = async () => {
        const text = finalText(await (await liveSession(s, 'kws-start-v1', audio, 0)).rest());
        expect(text.split(/\s+/).length).toBeGreaterThan(clip.reference.split(/\s+/).length / 2);
      };
      await hear();
      // Nobody uses it: unloaded, then loaded again by the next session.
      await waitFor(
        () => admin(s).get('kws-start-v1'),
        (r) => !r.loaded,
        30_000,
      );
      // The log line may reach the test's reader of stderr after the record says unloaded.
      await waitFor(
        async () => logLines(s).some((l) => l.msg === 'idle model unloaded' && l.model === 'kws-start-v1'),
        (seen) => seen,
        30_000,
      );
      await hear();
      const metrics = await (await fetch(`${s.url}/metrics`)).text();
      expect(metrics).toMatch(/^parlance_model_load_seconds_count\{model="kws-start-v1"\} 2$/m);
      expect(metrics).toMatch(/^parlance_model_pulls_total\{outcome="ready"\} 1$/m);
      expect(metrics).toMatch(/^parlance_models_loaded [01]$/m);
      // Started again with the same list: it is installed, nothing is downloaded.
      await s.stop();
      s = await startParlance({ dataDir, env });
      expect(await admin(s).get('kws-start-v1')).toMatchObject({ status: 'ready' });
      expect((await sttModels(s)).some((m) => m.id === 'kws-start-v1')).toBe(true);
      expect(hits.get('/plain/kws.tar.gz?start')).toBe(1);
    } finally {
      await s.stop();
    }
  }, 240_000);
});

describe.skipIf(!hasRealModel || !(await canMountTmpfs()))('a pull onto a full disk', () => {
  it('ends failed with internal_error and leaves nothing in the models directory', async () => {
    const modelsDir = path.join(root, 'small-models');
    mkdirSync(modelsDir, { recursive: true });
    expect(await mountTmpfs(modelsDir, 3)).toBe(true);
    const s = await startParlance({
      env: { PARLANCE_MODELS_DIR: modelsDir, PARLANCE_MODELS_CATALOGUE: catalogueFile, PARLANCE_ALLOW_PRIVATE_HOSTS: '127.0.0.1' },
    });
    try {
      const a = admin(s);
      expect((await a.pull({ source: `${base}/plain/kws.tar.gz?full`, family: 'stt-streaming', type: 'transducer', id: 'kws-full-v1' })).status).toBe(202);
      const rec = await a.settled('kws-full-v1');
      expect(rec).toMatchObject({ status: 'failed', error_type: 'internal_error' });
      expect(rec.error_message).toMatch(/disk is full/);
      expect(readdirSync(modelsDir)).toEqual([]);
    } finally {
      await s.stop();
      await unmount(modelsDir);
    }
  }, 120_000);
});
