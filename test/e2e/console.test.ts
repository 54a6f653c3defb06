// The web console in a real browser (Debian's chromium via playwright-core) against a real server: sign in with an
// API key, upload files, transcribe one and read its transcript, export SRT, transcribe from a URL the server
// downloads, play TTS over HTTP and stream it over the WebSocket, clone a voice and try it, live sessions from
// Chromium's fake microphone (a WAV of real speech), one with speakers and a translation side by side; usage, its
// charts checked against the API; every action counted as `playground`; 390 px wide with no horizontal scrolling;
// no browser console errors.
import { copyFileSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page, WebSocket } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody, gatedAudioServer, makeAudio, makeSpeech, startParlance, tempDir, type GatedAudioServer, type Parlance } from '../harness.js';
import { collectErrors, launchBrowser, playing, seriousA11yViolations } from '../browser.js';

const work = tempDir('parlance-console-e2e-');
const SPOKEN = 'The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background.';
const words = (text: string) => text.toLowerCase().match(/[a-z']+/g) ?? [];
/** How many of the reference words came back (pocketsphinx is not perfect; most must). */
const recalled = (text: string) => {
  const heard = new Set(words(text));
  return words(SPOKEN).filter((w) => heard.has(w)).length / words(SPOKEN).length;
};
const SHOTS = process.env.PARLANCE_SCREENSHOTS_DIR;

let s: Parlance;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let errors: string[];
let speechWav: string;
let toneWav: string;
/** A real HTTP server on loopback that the Parlance server downloads `audio_url`s from (speech.wav at any path). */
let audioServer: GatedAudioServer;
/** Nine more small files: with speech.wav and tone.wav, one more than the console's first page holds. */
let copies: string[];

async function shot(name: string) {
  if (SHOTS) await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

const api = async <T>(pathname: string) => {
  const res = await s.request(pathname);
  expect(res.status).toBe(200);
  return (await res.json()) as T;
};

beforeAll(async () => {
  [s, speechWav, toneWav] = await Promise.all([
    // Loopback audio URLs are private addresses: the SSRF guard lets this one through.
    startParlance({ env: { PARLANCE_ALLOW_PRIVATE_HOSTS: '127.0.0.1' } }),
    makeSpeech(path.join(work, 'speech.wav'), SPOKEN, { padSeconds: 1 }),
    makeAudio(path.join(work, 'tone.wav'), { seconds: 1 }),
  ]);
  audioServer = await gatedAudioServer(readFileSync(speechWav));
  copies = Array.from({ length: 9 }, (_, i) => path.join(work, `tone-${i + 1}.wav`));
  for (const c of copies) copyFileSync(toneWav, c);
  // The fake microphone loops its file: silence after the speech lets endpoints show between the repetitions.
  const mic = await makeSpeech(path.join(work, 'mic.wav'), SPOKEN, { padSeconds: 2 });
  browser = await launchBrowser({ microphoneWav: mic });
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  page = await context.newPage();
  // The suite shares two cores with other server processes: give every browser action room.
  page.setDefaultTimeout(60_000);
  errors = collectErrors(page);
  page.on('dialog', (d) => void d.accept());
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await audioServer?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('web console', () => {
  it('is served at / beside the API, whose 404s keep the REST body', async () => {
    const index = await fetch(`${s.url}/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toMatch(/^text\/html/);
    const asset = /src="(\/assets\/[^"]+\.js)"/.exec(await index.text())![1]!;
    const js = await fetch(`${s.url}${asset}`);
    expect([js.status, js.headers.get('cache-control')]).toEqual([200, 'public, max-age=31536000, immutable']);
    const missing = await fetch(`${s.url}/no-such-page`);
    expect(missing.status).toBe(404);
    expect((await errorBody(missing)).error_type).toBe('invalid_request');
  });

  it("opens console sessions for an API key from the console's own origin only, never from another session", async () => {
    const refused = await s.request('/v1/auth/playground-session', { method: 'POST' });
    expect(refused.status).toBe(403);
    expect((await errorBody(refused)).error_type).toBe('permission_denied');
    const headers = { 'sec-fetch-site': 'same-origin' };
    const opened = await s.request('/v1/auth/playground-session', { method: 'POST', headers });
    expect(opened.status).toBe(201);
    const session = (await opened.json()) as { api_key: string; expires_at: string };
    expect(Date.parse(session.expires_at) - Date.now()).toBeGreaterThan(3000_000);
    expect((await s.request('/v1/files/count', { key: session.api_key })).status).toBe(200);
    expect((await s.request('/v1/auth/playground-session', { method: 'POST', headers, key: session.api_key })).status).toBe(401);
  });

  it('refuses a wrong key at sign-in with a message', { timeout: 60_000 }, async () => {
    const other = await browser.newPage();
    await other.goto(s.url);
    await other.getByLabel('API key').fill('prl_not-a-real-key-at-all');
    await other.getByRole('button', { name: 'Sign in' }).click();
    expect(await other.getByRole('alert').textContent()).toMatch(/unauthenticated/);
    // The sign-in view (with its error shown) passes the accessibility audit; the other views are audited below.
    expect(await seriousA11yViolations(other)).toEqual([]);
    await other.close();
  });

  it('signs in with the API key (keyboard only), kept in session storage', { timeout: 60_000 }, async () => {
    await page.goto(s.url);
    await shot('sign-in');
    await page.getByLabel('API key').focus();
    await page.keyboard.type(s.apiKey);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('parlance.apiKey'))).toBe(s.apiKey);
    // A reload stays signed in (session storage), on the same page.
    await page.reload();
    await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
  });

  it(
    'uploads several files at once and by drag and drop, with progress; lists them in pages, counts and deletes them (source playground)',
    { timeout: 180_000 },
    async () => {
      await page.getByLabel('Choose audio files').setInputFiles([speechWav, toneWav, ...copies]);
      await page.getByText('11 files: 11 from the playground').waitFor({ timeout: 120_000 });
      expect(await page.getByText('uploaded', { exact: true }).count()).toBe(11);
      expect(await page.getByRole('progressbar', { name: 'Uploading speech.wav' }).getAttribute('value')).toBe('1');
      const list = page.getByRole('list', { name: 'Files' });
      // Ten per page: the eleventh is on the next page, and back.
      expect(await list.getByRole('listitem').count()).toBe(10);
      await page.getByRole('button', { name: 'Next page' }).click();
      await page.getByText('Page 2').waitFor();
      // The page label changes before page 2's listing arrives: wait for the first page's rows to go.
      await list.getByRole('listitem').nth(1).waitFor({ state: 'detached' });
      await list.getByRole('listitem').nth(0).waitFor();
      expect(await list.getByRole('listitem').count()).toBe(1);
      expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
      await page.getByRole('button', { name: 'Previous page' }).click();
      await page.getByText('Page 1').waitFor();

      // Drag and drop: a real drop event carrying a File.
      const bytes = [...readFileSync(toneWav)];
      const dataTransfer = await page.evaluateHandle((b) => {
        const dt = new DataTransfer();
        dt.items.add(new File([new Uint8Array(b)], 'dropped.wav', { type: 'audio/wav' }));
        return dt;
      }, bytes);
      await page.dispatchEvent('.drop-zone', 'drop', { dataTransfer });
      await list.getByText('dropped.wav').waitFor();
      expect(await api<{ playground: number; public_api: number; total: number }>('/v1/files/count')).toEqual({ playground: 12, public_api: 0, total: 12 });
      await page.getByText('12 files: 12 from the playground').waitFor();
      await shot('files');

      await page.getByRole('button', { name: 'Delete dropped.wav' }).click();
      await page.getByText('11 files: 11 from the playground').waitFor();
      const listed = await api<{ files: { filename: string }[] }>('/v1/files');
      expect(listed.files.map((f) => f.filename).sort()).toEqual(['speech.wav', 'tone.wav', ...copies.map((c) => path.basename(c))].sort());
    },
  );

  let transcriptionId = '';
  it('transcribes an uploaded file; the transcript view shows its words and plays from a clicked word', async () => {
    await page.getByRole('link', { name: 'Transcriptions' }).click();
    await page.getByLabel('File', { exact: true }).selectOption({ label: 'speech.wav' });
    await page.getByLabel('Context terms').fill('birch\ncanoe');
    await page.getByLabel('Speaker diarization').check();
    await page.getByLabel('Translation').selectOption({ label: 'Into es' });
    await page.getByRole('button', { name: 'Start transcription' }).click();
    // The list polls: the status moves on by itself until the transcript can be opened.
    await page.getByRole('link', { name: 'Open transcript of speech.wav' }).click({ timeout: 120_000 });
    transcriptionId = decodeURIComponent(page.url().split('#/transcriptions/')[1]!);
    const originalWords = page.locator('.timeline').first().locator('.word');
    await originalWords.first().waitFor();
    type Tok = { text: string; start_ms: number; speaker?: string; translation_status?: string };
    const transcript = await api<{ tokens: Tok[] }>(`/v1/transcriptions/${transcriptionId}/transcript`);
    const original = transcript.tokens.filter((t) => t.translation_status !== 'translation');
    const translated = transcript.tokens.filter((t) => t.translation_status === 'translation');
    expect(await originalWords.allTextContents()).toEqual(original.map((t) => t.text.trim()));
    expect(recalled(original.map((t) => t.text).join(''))).toBeGreaterThanOrEqual(0.6);
    // The translation, side by side; speakers labelled as the API labels them.
    expect(translated.length).toBeGreaterThan(0);
    expect(await page.locator('.timeline').nth(1).locator('.word').allTextContents()).toEqual(translated.map((t) => t.text.trim()));
    const speakers = [...new Set(original.map((t) => t.speaker))];
    expect(await page.locator('.timeline').first().locator('.speaker-label').allTextContents()).toEqual(
      original.filter((t, i) => t.speaker !== original[i - 1]?.speaker).map((t) => `Speaker ${t.speaker}`),
    );
    expect(speakers.every((sp) => sp !== undefined)).toBe(true);
    await shot('transcript');

    const third = original[2]!;
    await originalWords.nth(2).click();
    const { currentTime } = await playing(page, 'audio[aria-label="Transcribed audio"]');
    expect(currentTime).toBeGreaterThanOrEqual(third.start_ms / 1000 - 0.05);
    expect(await api<{ playground: number }>('/v1/transcriptions/count')).toMatchObject({ playground: 1, public_api: 0 });
  }, 180_000);

  it('plays from a clicked word in a tab that did not upload the file (the audio from GET /v1/files/{id}/content)', async () => {
    // A new browser context: nothing of the upload is held there, so the audio can only come from the API.
    const fresh = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const other = await fresh.newPage();
    other.setDefaultTimeout(60_000);
    const otherErrors = collectErrors(other);
    const contentRequests: string[] = [];
    other.on('request', (r) => r.url().includes('/content') && contentRequests.push(new URL(r.url()).pathname));
    try {
      await other.goto(s.url);
      await other.getByLabel('API key').fill(s.apiKey);
      await other.getByRole('button', { name: 'Sign in' }).click();
      await other.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
      await other.goto(`${s.url}/#/transcriptions/${encodeURIComponent(transcriptionId)}`);
      const record = await api<{ file_id: string }>(`/v1/transcriptions/${transcriptionId}`);
      type Tok = { start_ms: number; translation_status?: string };
      const original = (await api<{ tokens: Tok[] }>(`/v1/transcriptions/${transcriptionId}/transcript`)).tokens.filter(
        (t) => t.translation_status !== 'translation',
      );
      await other.locator('audio[aria-label="Transcribed audio"]').waitFor();
      const fourth = other.locator('.timeline').first().locator('.word').nth(3);
      await fourth.click();
      const { currentTime } = await playing(other, 'audio[aria-label="Transcribed audio"]');
      expect(currentTime).toBeGreaterThanOrEqual(original[3]!.start_ms / 1000 - 0.05);
      expect(contentRequests).toEqual([`/v1/files/${record.file_id}/content`]);
      expect(otherErrors).toEqual([]);
    } finally {
      await fresh.close();
    }
  }, 120_000);

  it("exports the transcript as SRT (the server's own export)", { timeout: 90_000 }, async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export SRT' }).click()]);
    expect(download.suggestedFilename()).toBe('speech.srt');
    const saved = readFileSync(await download.path(), 'utf8');
    const res = await s.request(`/v1/transcriptions/${transcriptionId}/transcript?format=srt`);
    expect(saved).toBe(await res.text());
    expect(saved).toMatch(/^1\n\d\d:\d\d:\d\d,\d{3} --> /);
  });

  it('transcribes audio from a URL the server downloads, and shows its words', async () => {
    await page.getByRole('link', { name: 'Transcriptions', exact: true }).click();
    await page.getByRole('radio', { name: 'Audio URL' }).check();
    const audioUrl = `${audioServer.url}/recordings/from-url.wav`;
    await page.getByRole('textbox', { name: 'Audio URL' }).fill(audioUrl);
    await page.getByRole('button', { name: 'Start transcription' }).click();
    // Named after the URL's last segment; the list polls until the download and the transcription are done.
    await page.getByRole('link', { name: 'Open transcript of from-url.wav' }).click({ timeout: 120_000 });
    const id = decodeURIComponent(page.url().split('#/transcriptions/')[1]!);
    expect(await api<{ status: string; audio_url: string; file_id: string | null }>(`/v1/transcriptions/${id}`)).toMatchObject({
      status: 'completed',
      audio_url: audioUrl,
      file_id: null,
    });
    const shown = page.locator('.timeline').first().locator('.word');
    await shown.first().waitFor();
    const transcript = await api<{ tokens: { text: string }[] }>(`/v1/transcriptions/${id}/transcript`);
    expect(await shown.allTextContents()).toEqual(transcript.tokens.map((t) => t.text.trim()));
    expect(recalled(transcript.tokens.map((t) => t.text).join(''))).toBeGreaterThanOrEqual(0.6);
    expect(await api<{ playground: number }>('/v1/transcriptions/count')).toMatchObject({ playground: 2, public_api: 0 });
  }, 180_000);

  it('plays TTS over HTTP and streams it over the WebSocket, audio starting before synthesis ends', async () => {
    await page.getByRole('link', { name: 'Text to speech' }).click();
    await page.getByRole('radio').first().waitFor();
    // The shared-voice filters: the listed voices are the API's for the same filter.
    await page.getByLabel('Gender').selectOption('female');
    const model = await page.getByLabel('Model', { exact: true }).inputValue();
    const female = await api<{ voices: { id: string }[] }>(`/v1/tts-voices?model=${model}&gender=female&language=en&limit=200`);
    await page.waitForFunction((n) => document.querySelectorAll('.voices input[type=radio]').length === n, female.voices.length);
    await shot('tts');

    await page.getByRole('button', { name: 'Play' }).click();
    await playing(page, 'audio[aria-label="Synthesized speech"]');

    await page.getByRole('button', { name: 'Stream' }).click();
    const report = page.locator('.stream-report');
    await page.waitForFunction(() => document.querySelector('.stream-report')?.getAttribute('data-synthesis-end-ms') !== '', undefined, { timeout: 60_000 });
    const first = Number(await report.getAttribute('data-first-audio-ms'));
    const end = Number(await report.getAttribute('data-synthesis-end-ms'));
    expect(Number(await report.getAttribute('data-chunks'))).toBeGreaterThan(1);
    expect(first).toBeLessThan(end);
    await page.getByRole('button', { name: 'Stream' }).waitFor({ timeout: 60_000 });
  }, 120_000);

  it('clones a voice from a reference clip, shows its per-model status and tries it', async () => {
    await page.getByRole('link', { name: 'Cloned voices' }).click();
    await page.getByLabel('Voice name').fill('Console clone');
    await page.getByLabel('Reference clip').setInputFiles(speechWav);
    await page.getByRole('button', { name: 'Create voice' }).click();
    const tryIt = page.getByRole('button', { name: /^Try Console clone on / }).first();
    await tryIt.waitFor({ timeout: 120_000 });
    await tryIt.click();
    await playing(page, 'audio[aria-label="Cloned voice sample"]', 60_000);
    // The page polls while a model is still processing, so it and the API can be a poll apart while statuses
    // move on: read both until they agree.
    const modelList = page.getByRole('list', { name: 'Models for Console clone' });
    const both = async () => {
      const voices = await api<{ voices: { models: { status: string }[] }[] }>('/v1/voices');
      return { page: await modelList.locator('.status').allTextContents(), api: voices.voices[0]!.models.map((m) => m.status.replace('_', ' ')) };
    };
    await expect.poll(both, { timeout: 30_000 }).toSatisfy((b: { page: string[]; api: string[] }) => b.page.join() === b.api.join() && b.page.length > 0);
    await shot('voices');
  }, 180_000);

  it('transcribes the microphone live: non-final then final words, from a temporary key', async () => {
    await page.getByRole('link', { name: 'Live' }).click();
    await page.evaluate(() => {
      const w = window as unknown as { sawNonFinal: boolean };
      w.sawNonFinal = false;
      new MutationObserver(() => document.querySelector('.live-text .non-final') && (w.sawNonFinal = true)).observe(document.body, {
        subtree: true,
        childList: true,
      });
    });
    await page.getByRole('button', { name: 'Start microphone' }).click();
    // Enough final words for one pass through the spoken sentences.
    await page.waitForFunction((n) => document.querySelectorAll('.live-text .final').length >= n, words(SPOKEN).length, { timeout: 90_000 });
    await shot('live');
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.getByRole('status').filter({ hasText: 'Idle' }).waitFor({ timeout: 90_000 });
    const finalText = (await page.locator('.live-text .final').allTextContents()).join('');
    expect(recalled(finalText)).toBeGreaterThanOrEqual(0.5);
    expect(await page.evaluate(() => (window as unknown as { sawNonFinal: boolean }).sawNonFinal)).toBe(true);
  }, 240_000);

  it('labels speakers and shows the translation side by side in a live session, as the server sent them', async () => {
    type LiveToken = { text: string; is_final: boolean; speaker?: string; translation_status?: string };
    const received: LiveToken[] = [];
    const onSocket = (ws: WebSocket) => {
      if (!ws.url().includes('/transcribe-websocket')) return;
      ws.on('framereceived', (f) => {
        if (typeof f.payload === 'string') received.push(...((JSON.parse(f.payload) as { tokens?: LiveToken[] }).tokens ?? []));
      });
    };
    page.on('websocket', onSocket);
    await page.getByLabel('Speaker diarization').check();
    await page.getByLabel('Translation').selectOption({ label: 'Into es' });
    await page.getByRole('button', { name: 'Start microphone' }).click();
    const originalLine = page.getByLabel('Live transcript');
    const translationLine = page.getByLabel('Live translation');
    await page.getByRole('heading', { name: 'Translation' }).waitFor();
    // One pass through the spoken sentences, and its translation beside it.
    await page.waitForFunction(
      (n) =>
        document.querySelectorAll('[aria-label="Live transcript"] .final').length >= n &&
        document.querySelectorAll('[aria-label="Live translation"] .final').length >= 3,
      words(SPOKEN).length,
      { timeout: 120_000 },
    );
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.getByRole('status').filter({ hasText: 'Idle' }).waitFor({ timeout: 90_000 });
    page.off('websocket', onSocket);

    const finals = received.filter((t) => t.is_final && t.text !== '<end>' && t.text !== '<fin>');
    const original = finals.filter((t) => t.translation_status !== 'translation');
    const translated = finals.filter((t) => t.translation_status === 'translation');
    expect(await originalLine.locator('.final').allTextContents()).toEqual(original.map((t) => t.text));
    expect(await translationLine.locator('.final').allTextContents()).toEqual(translated.map((t) => t.text));
    expect(recalled(original.map((t) => t.text).join(''))).toBeGreaterThanOrEqual(0.5);
    expect(words(translated.map((t) => t.text).join(''))).not.toEqual(words(original.map((t) => t.text).join('')));
    // Diarization was on: every word has a speaker, and each change of speaker is labelled in both lines.
    expect(finals.every((t) => t.speaker !== undefined)).toBe(true);
    const labels = (ts: LiveToken[]) => ts.filter((t, i) => t.speaker !== ts[i - 1]?.speaker).map((t) => `Speaker ${t.speaker}`);
    expect(await originalLine.locator('.speaker-label').allTextContents()).toEqual(labels(original));
    expect(await translationLine.locator('.speaker-label').allTextContents()).toEqual(labels(translated));
    expect(labels(original).length).toBeGreaterThan(0);
  }, 240_000);

  it('shows usage, budgets, concurrency and the API keys; every action above counted as playground', async () => {
    const monthly = await api<{ playground_usage_usd: string; api_usage_usd: string }>('/v1/organization/usage/monthly');
    expect(Number(monthly.playground_usage_usd)).toBeGreaterThan(0);
    expect(Number(monthly.api_usage_usd)).toBe(0);
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.getByTestId('usage-playground').waitFor();
    expect(await page.getByTestId('usage-playground').textContent()).toBe(`$${Number(monthly.playground_usage_usd).toFixed(4)}`);
    await page.getByRole('list', { name: 'API keys' }).getByText(s.apiKey.slice(0, 8), { exact: false }).first().waitFor();
    await page.getByRole('img', { name: /Live transcription streams, peak per hour/ }).waitFor();
    await shot('usage');

    // Revoking a key from the list: requests made with it are refused afterwards.
    const extra = await s.admin<{ api_key: string }>('create-key', '--project', s.projectId, '--name', 'Throwaway');
    expect((await s.request('/v1/files/count', { key: extra.api_key })).status).toBe(200);
    await page.reload();
    await page.getByRole('button', { name: 'Revoke Throwaway' }).click();
    await page.getByRole('button', { name: 'Revoke Throwaway' }).waitFor({ state: 'detached' });
    expect((await s.request('/v1/files/count', { key: extra.api_key })).status).toBe(401);
  }, 120_000);

  it('charts the monthly usage, the concurrency and the streams history with the figures the API returns', async () => {
    const month = new Date().toISOString().slice(0, 7);
    const monthly = await api<{ api_usage_usd: string; playground_usage_usd: string; projects: { name: string; usage_usd: string }[] }>(
      `/v1/organization/usage/monthly?month=${month}`,
    );
    const limits = await api<{ project: { current: { transcribe_concurrent: number }; limits: { transcribe_concurrent: number } } }>('/v1/concurrency-limits');
    // The history charts' own queries, as the page sends them (the last 24 hours, hour by hour).
    const historyQuery = (kind: string) => page.waitForRequest((r) => r.url().includes('/v1/concurrent-streams-history') && r.url().includes(`kind=${kind}`));
    const [sttRequest, ttsRequest] = await Promise.all([historyQuery('stt'), historyQuery('tts'), page.reload()]);
    const figure = (name: string) => page.getByRole('figure', { name, exact: true });
    const rows = async (name: string) => {
      await figure(name).getByText('Show data').click();
      return figure(name)
        .locator('tr')
        .evaluateAll((trs) => trs.map((tr) => [tr.querySelector('th')!.textContent, tr.querySelector('td')!.textContent]));
    };

    expect(await rows('Usage by source (USD)')).toEqual([
      ['API', String(Number(monthly.api_usage_usd))],
      ['Playground', String(Number(monthly.playground_usage_usd))],
    ]);
    expect(await rows('Usage by project (USD)')).toEqual(monthly.projects.map((p) => [p.name, String(Number(p.usage_usd))]));
    const sttGauge = page.locator('.gauge').filter({ has: page.getByLabel('Project live transcription streams') });
    expect(await sttGauge.locator('span').textContent()).toBe(
      `${limits.project.current.transcribe_concurrent} of ${limits.project.limits.transcribe_concurrent}`,
    );

    for (const [kind, request, title] of [
      ['stt', sttRequest, 'Live transcription streams, peak per hour (last 24 h, UTC)'],
      ['tts', ttsRequest, 'TTS streams, peak per hour (last 24 h, UTC)'],
    ] as const) {
      const query = new URL(request.url()).searchParams;
      expect(query.get('period_sec')).toBe('3600');
      expect(Date.parse(query.get('end_time')!) - Date.parse(query.get('start_time')!)).toBe(24 * 3_600_000);
      expect(Date.parse(query.get('end_time')!)).toBeGreaterThanOrEqual(Date.now() - 3_600_000);
      const history = await api<{ entries: { period_start: string; sample_max: number }[] }>(`/v1/concurrent-streams-history?${query.toString()}`);
      expect(await rows(title), kind).toEqual(history.entries.map((e) => [e.period_start.slice(11, 16), String(e.sample_max)]));
      // The live sessions and the TTS stream above were sampled: this hour's peak is at least one stream.
      expect(Math.max(...history.entries.map((e) => e.sample_max)), kind).toBeGreaterThanOrEqual(1);
    }
    expect(await figure('Usage by source (USD)').getByRole('img').getAttribute('aria-label')).toBe(
      `Usage by source (USD): 2 bars, highest ${Math.max(Number(monthly.api_usage_usd), Number(monthly.playground_usage_usd))} at Playground`,
    );
  }, 90_000);

  it('has no serious or critical accessibility violations on any view (axe-core), at desktop and phone widths', async () => {
    const found: Record<string, string[]> = {};
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
      for (const route of ['files', 'transcriptions', `transcriptions/${transcriptionId}`, 'live', 'tts', 'voices', 'usage']) {
        await page.goto(`${s.url}/#/${route}`);
        await page.locator('h1').waitFor();
        await page.waitForLoadState('networkidle');
        if (route.includes('/')) await page.locator('.timeline .word').first().waitFor();
        const violations = await seriousA11yViolations(page);
        if (violations.length) found[`${route} at ${width} px`] = violations;
      }
    }
    expect(found).toEqual({});
    await page.setViewportSize({ width: 1280, height: 900 });
  }, 240_000);

  it('fits a 390 px phone screen on every page without horizontal scrolling', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const route of ['files', 'transcriptions', `transcriptions/${transcriptionId}`, 'live', 'tts', 'voices', 'usage']) {
      await page.goto(`${s.url}/#/${route}`);
      await page.locator('h1').waitFor();
      await page.waitForLoadState('networkidle');
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(width, route).toBeLessThanOrEqual(390);
      if (route === 'transcriptions' || route === 'tts') await shot(`phone-${route}`);
    }
  }, 120_000);

  it('logged no error in the browser console', () => {
    expect(errors).toEqual([]);
  });
});
