// A real browser for the console's tests: Debian's chromium (scripts/debian-packages.txt) driven by playwright-core,
// which downloads no browser of its own.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type ConsoleMessage, type Page } from 'playwright-core';

export const CHROMIUM = process.env.PARLANCE_TEST_CHROMIUM ?? '/usr/bin/chromium';

// This machine's network is closed: Chromium's background connections (updates, sync, QUIC probes) are switched off
// so they neither wait nor log. --no-sandbox: CI runs the tests as root.
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--autoplay-policy=no-user-gesture-required',
];

/**
 * Launch Chromium; `microphoneWav` becomes its fake microphone, granted without a prompt. It loops the file unless
 * `microphoneLoop` is false: then it plays the file once, and silence after it.
 */
export async function launchBrowser(opts: { microphoneWav?: string; microphoneLoop?: boolean } = {}): Promise<Browser> {
  const file = opts.microphoneLoop === false ? `${opts.microphoneWav}%noloop` : opts.microphoneWav;
  const mic = opts.microphoneWav ? ['--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${file}`] : [];
  return chromium.launch({ executablePath: CHROMIUM, args: [...FLAGS, ...mic] });
}

/** Every console error and uncaught exception of a page, as text. */
export function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m: ConsoleMessage) => m.type() === 'error' && errors.push(`console: ${m.text()} (${m.location().url})`));
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  return errors;
}

/** Resolves once the <audio> element matched by `selector` is playing (its own event, not a poll). */
export async function playing(page: Page, selector: string, timeoutMs = 30_000): Promise<{ currentTime: number }> {
  await page.waitForSelector(selector, { timeout: timeoutMs });
  return page.$eval(
    selector,
    (el, ms) =>
      new Promise<{ currentTime: number }>((resolve, reject) => {
        const audio = el as HTMLAudioElement;
        const done = () => resolve({ currentTime: audio.currentTime });
        if (!audio.paused && audio.currentTime > 0) return done();
        const timer = setTimeout(() => reject(new Error(`audio did not play within ${ms} ms (error ${audio.error?.message ?? 'none'})`)), ms);
        audio.addEventListener('timeupdate', () => audio.currentTime > 0 && (clearTimeout(timer), done()), { once: false });
      }),
    timeoutMs,
  );
}

/** axe-core's own build, read from node_modules (nothing downloaded), evaluated in the page under test. */
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * The serious and critical accessibility violations axe-core finds on the page as it is now (WCAG 2.x A and AA
 * rules and axe's best practices), one line each: rule, impact, and the elements it names.
 */
export async function seriousA11yViolations(page: Page): Promise<string[]> {
  // page.evaluate runs outside the page's Content-Security-Policy, which would refuse an injected <script>.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: Document, opts: unknown): Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } });
    return result.violations;
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}
