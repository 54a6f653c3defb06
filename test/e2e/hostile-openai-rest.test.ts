// A hostile probe of the OpenAI-compatible REST audio API (/v1/audio/transcriptions, /translations, /speech):
// malformed, oversized and slow input, and another project's key. Refusals are OpenAI's error body with the native
// type as `code`; requests not received in time (headers or body trickled) are cut with 408 request_timeout by the
// HTTP server (PARLANCE_HTTP_REQUEST_TIMEOUT_SECONDS, short here) before any route sees them, so in the REST body.
// Nothing is left stored, nothing is logged as the server's failure, and the server keeps serving. The table of
// what was tried is docs/guide/security.md.
import { readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logLines, makeSpeech, type Parlance, startParlance, tempDir } from '../harness.js';

const REQUEST_TIMEOUT_SECONDS = 3;
const MAX_FILE_BYTES = 400_000;
let s: Parlance;
let work: string;
let wav: Buffer;
let keyB: string;

beforeAll(async () => {
  work = tempDir('parlance-hostile-openai-');
  const file = await makeSpeech(path.join(work, 'speech.wav'), 'The birch canoe slid on the smooth planks.');
  wav = readFileSync(file);
  s = await startParlance({
    env: { PARLANCE_HTTP_REQUEST_TIMEOUT_SECONDS: String(REQUEST_TIMEOUT_SECONDS), PARLANCE_MAX_FILE_SIZE_BYTES: String(MAX_FILE_BYTES) },
  });
  const project = await s.admin<{ id: string }>('create-project', '--name', 'Project B');
  keyB = (await s.admin<{ api_key: string }>('create-key', '--project', project.id)).api_key;
}, 120_000);

afterAll(async () => {
  await s?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** OpenAI's error body, exactly: {error: {message, type, param, code}}; its code. */
async function openAiError(res: Response, status: number, code: string): Promise<{ message: string; param: string | null }> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await res.json()) as { error: Record<string, unknown> };
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(body.error.code).toBe(code);
  expect(JSON.stringify(body)).not.toMatch(/\/tmp\/|\/work\/|SELECT|INSERT|sqlite|at .+\.js:\d+/i);
  return body.error as { message: string; param: string | null };
}

function form(fields: Record<string, string | string[]>, audio: Buffer | null = wav): FormData {
  const f = new FormData();
  if (audio) f.set('file', new Blob([new Uint8Array(audio)]), 'speech.wav');
  for (const [k, v] of Object.entries(fields)) for (const x of [v].flat()) f.append(k, x);
  return f;
}

const transcribe = (body: FormData | string, headers: Record<string, string> = {}, key?: string) =>
  s.request('/v1/audio/transcriptions', { method: 'POST', headers, body, ...(key ? { key } : {}) });
const speech = (body: unknown, key?: string) =>
  s.request('/v1/audio/speech', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...(key ? { key } : {}),
  });
const multipart = (boundary: string) => ({ 'content-type': `multipart/form-data; boundary=${boundary}` });

async function storedFiles(key = s.apiKey): Promise<number> {
  return ((await (await s.request('/v1/files/count', { key })).json()) as { total: number }).total;
}

describe('malformed input', () => {
  it('transcriptions: JSON, no boundary, a cut-off or foreign body, two files, garbage audio, bad field types', async () => {
    await openAiError(await transcribe('{"model":"whisper-1"}', { 'content-type': 'application/json' }), 400, 'invalid_request');
    await openAiError(await transcribe('{"model":', { 'content-type': 'application/json' }), 400, 'invalid_request');
    await openAiError(await transcribe('garbage', { 'content-type': 'multipart/form-data' }), 400, 'invalid_request');
    await openAiError(await transcribe('\u0000\u0001\u00ff', multipart('abc')), 400, 'invalid_request');
    const cut = `--B\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n--B\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\n`;
    await openAiError(await transcribe(cut + 'RIFF....WAVE', multipart('B')), 400, 'invalid_request');
    const two = form({ model: 'whisper-1' });
    two.append('file', new Blob([new Uint8Array(wav)]), 'again.wav');
    await openAiError(await transcribe(two), 400, 'invalid_request');
    await openAiError(await transcribe(form({ model: 'whisper-1' }, Buffer.from('not audio at all '.repeat(200)))), 400, 'invalid_audio_file');
    expect((await openAiError(await transcribe(form({ model: 'whisper-1', temperature: 'hot' })), 400, 'invalid_request')).param).toBe('temperature');
    expect((await openAiError(await transcribe(form({ model: 'whisper-1', response_format: 'xml' })), 400, 'invalid_request')).param).toBe('response_format');
    expect((await openAiError(await transcribe(form({}, wav)), 400, 'invalid_request')).param).toBe('model');
    await openAiError(await transcribe(form({ model: 'whisper-1' }, null)), 400, 'invalid_request');
    expect(await storedFiles()).toBe(0);
  });

  it('transcriptions: invalid UTF-8 in a field is read as U+FFFD and refused as an unknown model, not echoed raw', async () => {
    const body = Buffer.concat([
      Buffer.from('--B\r\nContent-Disposition: form-data; name="model"\r\n\r\n'),
      Buffer.from([0xff, 0xfe, 0xc3, 0x28]),
      Buffer.from('\r\n--B\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\n'),
      wav,
      Buffer.from('\r\n--B--\r\n'),
    ]);
    const res = await s.request('/v1/audio/transcriptions', { method: 'POST', headers: multipart('B'), body: new Uint8Array(body) });
    expect((await openAiError(res, 400, 'model_not_found')).message).toContain('\ufffd');
    expect(await storedFiles()).toBe(0);
  });

  it('speech: bad JSON, a body that is no object, wrong types, a foreign content type, a lone surrogate', async () => {
    await openAiError(await speech('{"input": "hi",'), 400, 'invalid_request');
    for (const body of ['[1,2]', '"hello"', 'null']) await openAiError(await speech(body), 400, 'invalid_request');
    expect((await openAiError(await speech({ model: 'tts-1', voice: 'alloy', input: 42 }), 400, 'invalid_request')).param).toBe('input');
    expect((await openAiError(await speech({ model: 'tts-1', voice: 'alloy', input: 'hi', speed: 'fast' }), 400, 'invalid_request')).param).toBe('speed');
    expect((await openAiError(await speech({ model: 'tts-1', voice: 'alloy', input: 'hi', response_format: 'exe' }), 400, 'invalid_request')).param).toBe(
      'response_format',
    );
    await openAiError(await speech({ model: 'nope', voice: 'alloy', input: 'hi' }), 400, 'model_not_found');
    const urlencoded = await s.request('/v1/audio/speech', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'input=hi&voice=alloy&model=tts-1',
    });
    await openAiError(urlencoded, 400, 'invalid_request');
    expect((await openAiError(await speech('{"model":"tts-1","voice":"alloy","input":"hi \\ud800"}'), 400, 'invalid_request')).param).toBe('input');
  });
});

describe('oversized input', () => {
  it('a long prompt, too many fields, a file over the limit, a long speech input or instructions, a 2 MB JSON body', async () => {
    expect((await openAiError(await transcribe(form({ model: 'whisper-1', prompt: 'word '.repeat(2100) })), 400, 'invalid_request')).param).toBe('prompt');
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}`, 'x']));
    await openAiError(await transcribe(form({ model: 'whisper-1', ...many })), 400, 'invalid_request');
    await openAiError(await transcribe(form({ model: 'whisper-1', 'timestamp_granularities[]': Array<string>(30).fill('word') })), 400, 'invalid_request');
    await openAiError(await transcribe(form({ model: 'whisper-1' }, Buffer.concat([wav, Buffer.alloc(MAX_FILE_BYTES)]))), 400, 'invalid_request');
    await openAiError(await transcribe(form({ model: 'x'.repeat(100_000) })), 400, 'invalid_request');
    expect((await openAiError(await speech({ model: 'tts-1', voice: 'alloy', input: 'a'.repeat(4097) }), 400, 'invalid_request')).param).toBe('input');
    const instructions = { model: 'gpt-4o-mini-tts', voice: 'alloy', input: 'hi', instructions: 'x'.repeat(100_000) };
    expect((await openAiError(await speech(instructions), 400, 'invalid_request')).param).toBe('instructions');
    await openAiError(await speech({ model: 'tts-1', voice: 'alloy', input: 'a'.repeat(2_000_000) }), 400, 'invalid_request');
    expect(await storedFiles()).toBe(0);
  });

  it('headers over the parser limit are refused in the REST body, and the connection closed', async () => {
    const reply = await rawRequest(`POST /v1/audio/speech HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ status_code: 400, error_type: 'invalid_request', message: 'Malformed HTTP request: the headers are too large.' });
  });
});

interface RawReply {
  status: number;
  body: Record<string, unknown>;
}

/**
 * A raw HTTP/1.1 connection: `head` written, then one `drip` byte every 200 ms (none when empty) until the server
 * closes the connection; what it answered.
 */
function rawRequest(head: string, drip = ''): Promise<RawReply> {
  return new Promise((resolve) => {
    const socket = connect(Number(new URL(s.url).port), '127.0.0.1', () => socket.write(head));
    let got = '';
    const timer = drip ? setInterval(() => socket.writable && socket.write(drip), 200) : undefined;
    socket.setEncoding('utf8').on('data', (d: string) => (got += d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1]);
      const body = got.includes('\r\n\r\n') ? (JSON.parse(got.slice(got.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>) : {};
      resolve({ status, body });
    });
  });
}

describe('slow input', () => {
  const auth = () => `Authorization: Bearer ${s.apiKey}\r\n`;
  const restTimeout = (reply: RawReply) => {
    expect(reply.status).toBe(408);
    expect(Object.keys(reply.body).sort()).toEqual(['error_type', 'message', 'more_info', 'request_id', 'status_code', 'validation_errors']);
    expect(reply.body).toMatchObject({ status_code: 408, error_type: 'request_timeout' });
  };

  // Found by this probe: the server had no request timeout (Fastify turns Node's off), so a body trickled a byte at a
  // time held its connection, and a multipart upload its staged file, for as long as the client liked.
  it('headers trickled: 408 request_timeout and the connection closed', async () => {
    restTimeout(await rawRequest('POST /v1/audio/speech HTTP/1.1\r\nHost: x\r\n', 'X'));
  });

  it('a JSON body trickled: 408 request_timeout and the connection closed', async () => {
    const head = `POST /v1/audio/speech HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"input":"`;
    restTimeout(await rawRequest(head, 'a'));
  });

  it('a multipart upload trickled: 408, its staged bytes removed, nothing stored, no server error logged', async () => {
    const head =
      `POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: multipart/form-data; boundary=B\r\nContent-Length: 100000\r\n\r\n` +
      `--B\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n--B\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\n`;
    restTimeout(await rawRequest(head, 'a'));
    expect(await storedFiles()).toBe(0);
    // Before the fix in files/staging.ts, the part cut off this way was logged as a storage failure (500).
    expect(logLines(s).filter((l) => Number(l.level) >= 50)).toEqual([]);
  });

  it('a request received in time is served after the trickled ones, on a connection of its own', async () => {
    const res = await transcribe(form({ model: 'whisper-1' }));
    expect(res.status).toBe(200);
    expect(((await res.json()) as { text: string }).text).toMatch(/\w/);
  });
});

describe("another project's key", () => {
  it("finds neither the transcription an OpenAI request made, nor its transcript, nor this project's cloned voice", async () => {
    const res = await transcribe(form({ model: 'whisper-1' }));
    const id = res.headers.get('x-parlance-transcription-id')!;
    expect(res.status).toBe(200);
    for (const p of [`/v1/transcriptions/${id}`, `/v1/transcriptions/${id}/transcript`]) {
      const r = await s.request(p, { key: keyB });
      expect(r.status).toBe(404);
      expect(((await r.json()) as { error_type: string }).error_type).toBe('transcription_not_found');
    }
    expect((await s.request(`/v1/transcriptions/${id}`, { method: 'DELETE', key: keyB })).status).toBe(404);
    expect((await s.request(`/v1/transcriptions/${id}`)).status).toBe(200);
    // A cloned voice of this project is, for the other key, the same as no voice at all (OpenAI's 400 naming `voice`).
    const voice = new FormData();
    voice.set('file', new Blob([new Uint8Array(wav)]), 'v.wav');
    voice.set('name', 'Ours');
    const created = (await (await s.request('/v1/voices', { method: 'POST', body: voice })).json()) as { id: string };
    const theirs = await openAiError(await speech({ model: 'tts-1', voice: created.id, input: 'hi' }, keyB), 400, 'invalid_request');
    const none = await openAiError(await speech({ model: 'tts-1', voice: '00000000-0000-4000-8000-000000000000', input: 'hi' }, keyB), 400, 'invalid_request');
    expect(theirs.message.replace(created.id, 'ID')).toBe(none.message.replace('00000000-0000-4000-8000-000000000000', 'ID'));
    expect(await storedFiles(keyB)).toBe(0);
    expect((await fetch(`${s.url}/health`)).status).toBe(200);
  });
});
