// The console's Models page in a real browser (Debian's chromium) against a real server: the catalogue of names, a
// pull with its progress bar until the model is ready (the archive built at test time from the real model, served
// slowly by a local HTTP server), aliases saved, the model removed; the page checked against the API at each step,
// audited with axe-core and at a phone's width; a key without models:admin sees the refusal.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectErrors, launchBrowser, seriousA11yViolations } from '../browser.js';
import { type Parlance, startParlance, tempDir } from '../harness.js';
import { hasRealModel, REAL_STREAMING_MODEL } from '../real-model.js';

const KWS = 'kws-zipformer-v1';

describe.skipIf(!hasRealModel)('the console’s Models page', () => {
  const work = tempDir('parlance-console-models-');
  let server: Server;
  let s: Parlance;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    const archive = path.join(work, 'kws.tar.gz');
    execFileSync('tar', ['-czf', archive, '-C', path.dirname(REAL_STREAMING_MODEL), path.basename(REAL_STREAMING_MODEL)]);
    const body = readFileSync(archive);
    // The archive in 30 pieces 100 ms apart: the download lasts long enough to be seen in progress.
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(body.length) });
      const piece = Math.ceil(body.length / 30);
      let at = 0;
      const next = () => {
        res.write(body.subarray(at, at + piece));
        at += piece;
        if (at >= body.length) res.end();
        else setTimeout(next, 100);
      };
      next();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const catalogue = path.join(work, 'catalogue.json');
    writeFileSync(
      catalogue,
      JSON.stringify([
        { name: 'kws-zipformer', title: 'KWS Zipformer', url: `${base}/kws.tar.gz`, family: 'stt-streaming', type: 'transducer', languages: ['en'], id: KWS },
      ]),
    );
    s = await startParlance({ env: { PARLANCE_MODELS_CATALOGUE: catalogue, PARLANCE_ALLOW_PRIVATE_HOSTS: '127.0.0.1' } });
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.setDefaultTimeout(60_000);
    errors = collectErrors(page);
    page.on('dialog', (d) => void d.accept());
    await page.goto(s.url);
    await page.getByLabel('API key').fill(s.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await s?.stop();
    await new Promise((r) => server?.close(r));
    rmSync(work, { recursive: true, force: true });
  });

  const record = async () => {
    const res = await s.request(`/v1/admin/models/${KWS}`);
    return res.status === 404 ? undefined : ((await res.json()) as { status: string; aliases: string[] });
  };

  it('pulls from the catalogue with progress, sets aliases and removes the model, as the API says', async () => {
    await page.getByRole('link', { name: 'Models' }).click();
    await page.getByRole('heading', { name: 'Models', level: 1 }).waitFor();
    // The built-in catalogue's names, and the test's entry (PARLANCE_MODELS_CATALOGUE adds it).
    const options = page.getByLabel('Catalogue model').locator('option');
    await page.getByText('No models brought yet').waitFor();
    expect(await options.allTextContents()).toContain('KWS Zipformer (stt-streaming transducer)');
    expect(await options.count()).toBe(((await (await s.request('/v1/admin/models')).json()) as { catalogue: unknown[] }).catalogue.length);
    expect(await page.getByText('No models brought yet').count()).toBe(1);
    await page.getByLabel('Catalogue model').selectOption('kws-zipformer');
    await page.getByRole('button', { name: 'Pull' }).click();
    // The download shows its progress while the API says downloading.
    await page.getByRole('progressbar', { name: `Downloading ${KWS}` }).waitFor();
    expect((await record())?.status).toMatch(/downloading|installing|ready/);
    const status = page.getByLabel(`${KWS} status`);
    await expect.poll(() => status.textContent(), { timeout: 120_000 }).toBe('ready');
    expect((await record())?.status).toBe('ready');
    // The pulled model leaves the catalogue's choices.
    expect(await options.allTextContents()).not.toContain('KWS Zipformer (stt-streaming transducer)');

    await page.getByLabel(`Aliases of ${KWS}`).fill('stt-rt-v4, my-live');
    await page.getByRole('button', { name: `Save aliases of ${KWS}` }).click();
    await expect.poll(async () => (await record())?.aliases, { timeout: 30_000 }).toEqual(['stt-rt-v4', 'my-live']);
    expect(await page.getByLabel(`Aliases of ${KWS}`).inputValue()).toBe('stt-rt-v4, my-live');
    if (process.env.PARLANCE_SCREENSHOTS_DIR) await page.screenshot({ path: path.join(process.env.PARLANCE_SCREENSHOTS_DIR, 'models.png'), fullPage: true });

    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1280, height: 900 });

    await page.getByRole('button', { name: `Remove ${KWS}` }).click();
    await page.getByText('No models brought yet').waitFor();
    expect(await record()).toBeUndefined();
  }, 240_000);

  it('shows a key without models:admin the refusal', async () => {
    const key = (await s.admin<{ api_key: string }>('create-key', '--project', s.projectId)).api_key;
    const other = await browser.newPage();
    await other.goto(s.url);
    await other.getByLabel('API key').fill(key);
    await other.getByRole('button', { name: 'Sign in' }).click();
    await other.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
    await other.getByRole('link', { name: 'Models' }).click();
    expect(await other.getByRole('alert').textContent()).toMatch(/permission_denied|models:admin/);
    await other.close();
  }, 60_000);

  it('logged no error in the browser console', () => {
    // The refused page's 403 is the one failed request a browser logs.
    expect(errors).toEqual([]);
  });
});
