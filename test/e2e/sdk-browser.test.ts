// The official browser SDKs in a real browser (Debian's chromium via playwright-core) against a real server:
// `@soniox/client` (real-time transcription from the microphone; text-to-speech over the WebSocket and over HTTP)
// and the older `@soniox/speech-to-text-web` (real-time transcription). A page this test serves loads each SDK's
// own browser build from node_modules. The page never holds the API key: its backend (this test's HTTP server)
// mints a temporary key for each use, as the SDKs' docs recommend. The microphone is Chromium's fake capture device
// playing a real recording once (test/real-speech.ts). docs/guide/browser-sdks.md is written from what this shows.
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { promisify } from 'node:util';
import type * as ClientSdk from '@soniox/client';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wordErrorRate } from '../../src/engines/stt/wer.js';
import { collectErrors, launchBrowser } from '../browser.js';
import { ROOT, startParlance, tempDir, type Parlance } from '../harness.js';
import { testdataClips } from '../real-speech.js';
import { probeAudio } from './tts-helpers.js';

const execFileP = promisify(execFile);

/** Parlance's addresses in the form `@soniox/client`'s `config` takes them. */
interface Addresses {
  api_domain: string;
  stt_ws_url: string;
  tts_api_url: string;
  tts_ws_url: string;
}
/**
 * The part of `@soniox/speech-to-text-web` 1.4.0's API this test uses, as its README and its `dist/*.d.ts` give it.
 * Its own declarations cannot be imported here: they re-export `./soniox-client` without a file extension, which
 * TypeScript's `nodenext` resolution (this project's) does not follow, so the package's types come out empty.
 */
interface LegacyResult {
  tokens: { text: string; is_final: boolean }[];
  total_audio_proc_ms: number;
}
interface LegacySdk {
  SonioxClient: new (options: {
    webSocketUri?: string;
    apiKey: string | (() => Promise<string>);
    onPartialResult?: (result: LegacyResult) => void;
    onFinished?: () => void;
    onError?: (status: string, message: string, errorCode: number | undefined) => void;
  }) => { readonly state: string; start(options: { model: string; enableEndpointDetection?: boolean }): Promise<void>; stop(): void };
}
/** What the page's module script puts on `window`: the two SDKs, Parlance's addresses, and the app's key helper. */
interface PageWindow {
  sdks: { client: typeof ClientSdk; web: LegacySdk };
  parlance: Addresses;
  temporaryKey(usage_type: 'transcribe_websocket' | 'tts_rt'): Promise<string>;
}

const SDK_FILES: Record<string, string> = {
  '/sdk/client.mjs': path.join(ROOT, 'node_modules', '@soniox', 'client', 'dist', 'index.mjs'),
  '/sdk/speech-to-text-web.mjs': path.join(ROOT, 'node_modules', '@soniox', 'speech-to-text-web', 'dist', 'speech-to-text-web.js'),
};
const page = (parlance: Addresses) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>SDK page</title></head><body>
<script type="module">
import * as client from '/sdk/client.mjs';
import * as web from '/sdk/speech-to-text-web.mjs';
window.sdks = { client, web };
window.parlance = ${JSON.stringify(parlance)};
// The app's backend mints a temporary key (POST /v1/auth/temporary-api-key with its API key) for each use.
window.temporaryKey = async (usage_type) => {
  const res = await fetch('/temporary-key', { method: 'POST', body: JSON.stringify({ usage_type }) });
  if (!res.ok) throw new Error('temporary key: HTTP ' + res.status);
  return (await res.json()).api_key;
};
document.title = 'ready';
</script></body></html>`;

/** A real recording: Debian's librivox clip of 5.3 s, "unless to be rather cold hearted and rather selfish is to be ill disposed". */
const CLIP = testdataClips().find((c) => c.file.endsWith('0890.wav'))!;
/** Silence before the speech (the recorder starts a moment after the capture does), and after it. */
const LEAD_S = 0.5;
const TAIL_S = 1;
/** The word error rate a transcript must stay below: the packaging test holds a session of the plain clip to it too. */
const MAX_WER = 0.5;
const werOfClip = (text: string) =>
  wordErrorRate(
    CLIP.reference,
    text
      .toLowerCase()
      .replace(/[^a-z' ]/g, ' ')
      .trim(),
  ).wer;

let s: Parlance;
let work: string;
let micWav: string;
/**
 * Audio time by which the server has heard all of the speech: the pages stop recording at the first result frame
 * this far in. Sessions ask for endpoint detection, so such a frame comes even if the words are all out before: the
 * `<end>` after the last word, 600 ms (`max_endpoint_delay_ms`) into the silence that follows the clip (the fake
 * device keeps giving silence after the file).
 */
let heardAllMs: number;
let pageServer: Server;
let pageUrl: string;
/** The usage types of the temporary keys the page's backend minted, in order. */
const minted: string[] = [];
/** POST /tts requests the page's backend passed on to Parlance (the same-origin route for text-to-speech over HTTP). */
let forwardedTts = 0;

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/**
 * The page's backend: the page, the SDKs' browser builds, temporary keys minted with the API key only it holds, and
 * POST /tts passed on to Parlance as a reverse proxy in front of both would (the page's own origin).
 */
function servePage(parlance: () => Addresses): Promise<Server> {
  const server = createServer((req, res) => {
    void (async () => {
      if (req.method === 'GET' && req.url === '/') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(parlance()));
      } else if (req.method === 'GET' && req.url && SDK_FILES[req.url]) {
        res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(readFileSync(SDK_FILES[req.url]!));
      } else if (req.method === 'POST' && req.url === '/temporary-key') {
        const { usage_type } = JSON.parse((await body(req)).toString('utf8')) as { usage_type: string };
        const r = await s.request('/v1/auth/temporary-api-key', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ usage_type, expires_in_seconds: 300, single_use: true }),
        });
        if (r.status === 201) minted.push(usage_type);
        res.writeHead(r.status, { 'content-type': 'application/json' }).end(await r.text());
      } else if (req.method === 'POST' && req.url === '/tts') {
        forwardedTts++;
        const r = await fetch(`${s.url}/tts`, {
          method: 'POST',
          headers: { authorization: req.headers.authorization ?? '', 'content-type': req.headers['content-type'] ?? '' },
          body: new Uint8Array(await body(req)),
        });
        res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/octet-stream' });
        if (r.body) Readable.fromWeb(r.body as WebReadableStream<Uint8Array>).pipe(res);
        else res.end();
      } else {
        res.writeHead(404).end();
      }
    })().catch((err: unknown) => res.writeHead(500).end(String(err)));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** A fresh browser (its fake microphone, if asked for, plays the clip once) on the page, with both SDKs loaded. */
async function openPage(opts: { microphone?: boolean } = {}): Promise<{ browser: Browser; page: Page; errors: string[] }> {
  const browser = await launchBrowser(opts.microphone ? { microphoneWav: micWav, microphoneLoop: false } : {});
  const p = await browser.newPage();
  // Two cores shared with other test runs: give every browser step room.
  p.setDefaultTimeout(60_000);
  const errors = collectErrors(p);
  await p.goto(pageUrl);
  await p.waitForFunction(() => document.title === 'ready');
  return { browser, page: p, errors };
}

async function withPage<T>(opts: { microphone?: boolean }, run: (page: Page, errors: string[]) => Promise<T>): Promise<T> {
  const { browser, page: p, errors } = await openPage(opts);
  try {
    return await run(p, errors);
  } finally {
    await browser.close();
  }
}

beforeAll(async () => {
  work = tempDir('parlance-sdk-browser-');
  micWav = path.join(work, 'mic.wav');
  const pad = `adelay=${LEAD_S * 1000}:all=1,apad=pad_dur=${TAIL_S}`;
  await execFileP('ffmpeg', ['-nostdin', '-v', 'error', '-i', CLIP.file, '-af', pad, '-ar', '16000', '-ac', '1', '-y', micWav]);
  const probe = await execFileP('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', CLIP.file]);
  heardAllMs = Math.round((LEAD_S + Number(probe.stdout)) * 1000);
  // The page's origin first: Parlance lets it call the HTTP API directly (PARLANCE_CORS_ORIGINS).
  pageServer = await servePage(() => {
    const ws = s.url.replace(/^http/, 'ws');
    return { api_domain: s.url, stt_ws_url: `${ws}/transcribe-websocket`, tts_api_url: s.url, tts_ws_url: `${ws}/tts-websocket` };
  });
  pageUrl = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}/`;
  // Words are checked, not a loaded machine's timing: final words always come from the second pass, never the
  // streaming decoder's in its place.
  s = await startParlance({ env: { PARLANCE_CORS_ORIGINS: new URL(pageUrl).origin, PARLANCE_REALTIME_SECOND_PASS_WAIT_MS: '60000' } });
}, 120_000);

afterAll(async () => {
  await new Promise((r) => pageServer?.close(r));
  await s?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the word error rate check', () => {
  it('fails an empty or wrong transcript and passes the reference', () => {
    expect(werOfClip('')).toBeGreaterThanOrEqual(MAX_WER);
    expect(werOfClip('the quick brown fox jumps over the lazy dog')).toBeGreaterThanOrEqual(MAX_WER);
    expect(werOfClip(CLIP.reference)).toBe(0);
  });
});

describe('@soniox/client in Chromium against Parlance', () => {
  it('record(): transcribes the microphone (a real recording) in real time, with a temporary key', { timeout: 180_000 }, async () => {
    const before = minted.length;
    const { text, errors } = await withPage({ microphone: true }, async (p, errors) => {
      const text = await p.evaluate(async (heardAllMs) => {
        const { sdks, parlance, temporaryKey } = window as unknown as PageWindow;
        const client = new sdks.client.SonioxClient({
          // Called once per session (and with usage 'tts_rt' for text-to-speech): a fresh temporary key each time.
          config: async (context) => ({ ...parlance, api_key: await temporaryKey(context?.usage ?? 'transcribe_websocket') }),
        });
        const recording = client.realtime.record({ model: 'stt-rt-v4', enable_endpoint_detection: true });
        const finals: string[] = [];
        recording.on('result', (r) => finals.push(...r.tokens.filter((t) => t.is_final).map((t) => t.text)));
        await new Promise<void>((resolve, reject) => {
          recording.on('result', (r) => r.total_audio_proc_ms >= heardAllMs && resolve());
          recording.on('error', reject);
        });
        await recording.stop(); // resolves once the server's `finished` frame is in: every token is final
        return finals.join('');
      }, heardAllMs);
      return { text, errors };
    });
    expect(minted.slice(before)).toEqual(['transcribe_websocket']);
    expect(werOfClip(text), text).toBeLessThan(MAX_WER);
    expect(errors).toEqual([]);
  });

  it('realtime.tts(): speech over /tts-websocket with a tts_rt temporary key, a WAV that decodes', { timeout: 120_000 }, async () => {
    const before = minted.length;
    const { bytes, errors } = await withPage({}, async (p, errors) => {
      const bytes = await p.evaluate(async () => {
        const { sdks, parlance, temporaryKey } = window as unknown as PageWindow;
        const client = new sdks.client.SonioxClient({
          config: async (context) => ({
            ...parlance,
            api_key: await temporaryKey(context?.usage ?? 'transcribe_websocket'),
            tts_defaults: { model: 'tts-rt-v2', language: 'en' },
          }),
        });
        const stream = await client.realtime.tts({ voice: 'Adrian', audio_format: 'wav' });
        stream.sendText('Hello from the browser. ');
        stream.sendText('This speech came over the WebSocket.', { end: true });
        const chunks: Uint8Array[] = [];
        for await (const chunk of stream) chunks.push(chunk);
        stream.close();
        return chunks.flatMap((c) => [...c]);
      });
      return { bytes: Buffer.from(bytes), errors };
    });
    expect(minted.slice(before)).toEqual(['tts_rt']);
    expect(bytes.toString('ascii', 0, 4)).toBe('RIFF');
    expect((await probeAudio(bytes, 'wav', 0)).seconds).toBeGreaterThan(1);
    expect(errors).toEqual([]);
  });

  it('tts.generate(): speech over POST /tts, from the page origin through its backend and straight to Parlance (CORS)', { timeout: 120_000 }, async () => {
    const before = minted.length;
    const forwardedBefore = forwardedTts;
    const { bytes, direct, crossError, errors } = await withPage({}, async (p, errors) => {
      const generate = (sameOrigin: boolean) =>
        p.evaluate(async (sameOrigin) => {
          const { sdks, parlance, temporaryKey } = window as unknown as PageWindow;
          const client = new sdks.client.SonioxClient({
            config: async (context) => ({
              ...parlance,
              // Through the page's own origin (its backend passes POST /tts on), or straight to Parlance, which allows
              // this page's origin (PARLANCE_CORS_ORIGINS).
              ...(sameOrigin && { tts_api_url: location.origin }),
              api_key: await temporaryKey(context?.usage ?? 'transcribe_websocket'),
            }),
          });
          try {
            const audio = await client.tts.generate({ text: 'Hello over HTTP.', voice: 'Adrian' });
            return { ok: [...audio] };
          } catch (err) {
            return { error: sdks.client.isSonioxHttpError(err) ? err.code : String(err) };
          }
        }, sameOrigin);
      const sameOrigin = await generate(true);
      const crossOrigin = await generate(false);
      return { bytes: Buffer.from(sameOrigin.ok ?? []), direct: Buffer.from(crossOrigin.ok ?? []), crossError: crossOrigin.error, errors };
    });
    expect(minted.slice(before)).toEqual(['tts_rt', 'tts_rt']);
    expect(forwardedTts - forwardedBefore).toBe(1);
    expect(bytes.toString('ascii', 0, 4)).toBe('RIFF');
    expect((await probeAudio(bytes, 'wav', 0)).seconds).toBeGreaterThan(0.5);
    expect(errors).toEqual([]);
    expect(crossError).toBeUndefined();
    expect(direct.toString('ascii', 0, 4)).toBe('RIFF');
    expect((await probeAudio(direct, 'wav', 0)).seconds).toBeGreaterThan(0.5);
  });
});

describe('@soniox/speech-to-text-web in Chromium against Parlance', () => {
  it('transcribes the microphone (a real recording) in real time, with a temporary key', { timeout: 180_000 }, async () => {
    const before = minted.length;
    const { text, errors } = await withPage({ microphone: true }, async (p, errors) => {
      const text = await p.evaluate(async (heardAllMs) => {
        const { sdks, parlance, temporaryKey } = window as unknown as PageWindow;
        const finals: string[] = [];
        await new Promise<void>((resolve, reject) => {
          const client = new sdks.web.SonioxClient({
            webSocketUri: parlance.stt_ws_url,
            // Called when the socket opens; the config message (with this key) follows it.
            apiKey: () => temporaryKey('transcribe_websocket'),
            onPartialResult: (r) => {
              // This older SDK hands the frames over as they come: the endpoint marker is among the tokens.
              finals.push(...r.tokens.filter((t) => t.is_final && t.text !== '<end>').map((t) => t.text));
              if (r.total_audio_proc_ms >= heardAllMs && client.state === 'Running') client.stop();
            },
            onFinished: resolve,
            onError: (status, message, code) => reject(new Error(`${status} ${code ?? ''}: ${message}`)),
          });
          client.start({ model: 'stt-rt-v4', enableEndpointDetection: true }).catch(reject);
        });
        return finals.join('');
      }, heardAllMs);
      return { text, errors };
    });
    expect(minted.slice(before)).toEqual(['transcribe_websocket']);
    expect(werOfClip(text), text).toBeLessThan(MAX_WER);
    expect(errors).toEqual([]);
  });
});
