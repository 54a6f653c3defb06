// The web console in a real browser (Debian's chromium via playwright-core) against a real server: sign in with an
// API key, upload files, transcribe one and read its transcript, export SRT, play TTS over HTTP and stream it over
// the WebSocket, clone a voice and try it, a live session from Chromium's fake microphone (a WAV of real speech),
// usage; every action counted as `playground`; 390 px wide with no horizontal scrolling; no browser console errors.
import { copyFileSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody, makeAudio, makeSpeech, startParlance, tempDir, type Parlance } from '../harness.js';
import { collectErrors, launchBrowser, playing } from '../browser.js';

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
    startParlance(),
    makeSpeech(path.join(work, 'speech.wav'), SPOKEN, { padSeconds: 1 }),
    makeAudio(path.join(work, 'tone.wav'), { seconds: 1 }),
  ]);
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

  it("exports the transcript as SRT (the server's own export)", { timeout: 90_000 }, async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export SRT' }).click()]);
    expect(download.suggestedFilename()).toBe('speech.srt');
    const saved = readFileSync(await download.path(), 'utf8');
    const res = await s.request(`/v1/transcriptions/${transcriptionId}/transcript?format=srt`);
    expect(saved).toBe(await res.text());
    expect(saved).toMatch(/^1\n\d\d:\d\d:\d\d,\d{3} --> /);
  });

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
    const voices = await api<{ voices: { name: string; models: { status: string }[] }[] }>('/v1/voices');
    const statuses = await page.getByRole('list', { name: 'Models for Console clone' }).locator('.status').allTextContents();
    expect(statuses).toEqual(voices.voices[0]!.models.map((m) => m.status.replace('_', ' ')));
    await tryIt.click();
    await playing(page, 'audio[aria-label="Cloned voice sample"]', 60_000);
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
