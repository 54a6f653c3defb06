// Conformance with the official Node SDK (@soniox/node) for usage (docs/wire-compat.md, "REST conventions"):
// (usageLogs.list with iteration, the filters re-sent on every page; usageLogs.getSummary day alignment).
import { Decimal } from 'decimal.js';
import { SonioxHttpError, SonioxNodeClient } from '@soniox/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startParlance, type Parlance } from '../harness.js';

let s: Parlance;
let client: SonioxNodeClient;
const start = new Date(Date.now() - 60_000).toISOString();
const texts = ['First metered sentence.', 'Second one.', 'And a third, a little longer than the others.'];

beforeAll(async () => {
  s = await startParlance({ env: { PARLANCE_COMPAT: 'soniox-sdk' } });
  client = new SonioxNodeClient({ api_key: s.apiKey, base_url: s.url, tts_api_url: s.url });
  for (const text of texts) await client.tts.generate({ text, voice: 'Adrian', model: 'tts-rt-v2', language: 'en' });
});
afterAll(async () => s?.stop());

const end = () => new Date(Date.now() + 3_600_000).toISOString();

async function waitForLogs(n: number) {
  for (let i = 0; i < 50; i++) {
    const page = await client.usageLogs.list({ start_time: start, end_time: end() });
    if (page.usage_logs.length >= n) return page.usage_logs;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('usage logs did not appear');
}

describe('@soniox/node usage against Parlance', () => {
  it('usageLogs.list({limit: 1}) iterates every record across pages, in end_time order', async () => {
    const firstPage = await waitForLogs(texts.length);
    const result = await client.usageLogs.list({ start_time: start, end_time: end(), limit: 1 });
    expect(result.usage_logs).toHaveLength(1);
    expect(result.isPaged()).toBe(true);
    const seen = [];
    for await (const log of result) seen.push(log);
    expect(seen.map((l) => l.uuid)).toEqual(firstPage.map((l) => l.uuid));
    expect(seen.map((l) => l.input_text_tokens)).toEqual(texts.map((t) => t.length));
    for (const l of seen) {
      expect(l.model).toBe('parlance-tts-v1');
      expect(new Decimal(l.cost_usd).eq(new Decimal(l.input_cost_usd).plus(l.output_cost_usd))).toBe(true);
      expect(new Decimal(l.input_cost_usd).eq(new Decimal(l.input_text_cost_usd).plus(l.input_audio_cost_usd))).toBe(true);
    }
    const desc = [];
    for await (const log of await client.usageLogs.list({ start_time: start, end_time: end(), limit: 2, sort: 'end_time_desc' })) desc.push(log.uuid);
    expect(desc).toEqual([...seen].reverse().map((l) => l.uuid));
    const last = await client.usageLogs.list({ start_time: start, end_time: end() });
    expect(last.next_page_cursor).toBeNull();
  });

  it('getSummary() gives every UTC day of the window, arrays aligned, totals adding up', async () => {
    const logs = await waitForLogs(texts.length);
    const from = new Date(Date.now() - 2 * 86_400_000);
    const summary = await client.usageLogs.getSummary({ start_time: from.toISOString(), end_time: end() });
    const { total } = summary;
    const today = new Date().toISOString().slice(0, 10);
    expect(total.model).toBeNull();
    expect(total.days[0]).toBe(from.toISOString().slice(0, 10));
    expect(total.days).toContain(today);
    expect(total.days.length).toBeGreaterThanOrEqual(3);
    for (const k of ['cost_usd', 'input_cost_usd', 'output_cost_usd', 'duration_cost_usd', 'num_requests', 'input_text_tokens', 'duration_ms'] as const)
      expect((total[k] as unknown[]).length).toBe(total.days.length);
    expect(total.total_num_requests).toBe(logs.length);
    expect(total.num_requests[total.days.indexOf(today)]).toBe(logs.length);
    const sum = logs.reduce((n, l) => n.plus(l.cost_usd), new Decimal(0));
    expect(new Decimal(total.total_cost_usd).eq(sum)).toBe(true);
    expect(total.cost_usd.reduce((n, c) => n.plus(c), new Decimal(0)).eq(sum)).toBe(true);
    expect(summary.models.map((m) => m.model)).toEqual(['parlance-tts-v1']);
    expect(summary.models[0]!.total_input_text_tokens).toBe(texts.join('').length);
  });

  it('an empty or reversed window is a 400 the SDK surfaces as SonioxHttpError', async () => {
    const err = await client.usageLogs.getSummary({ start_time: start, end_time: start }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SonioxHttpError);
    expect((err as SonioxHttpError).statusCode).toBe(400);
    const err2 = await client.usageLogs.list({ start_time: end(), end_time: start }).catch((e: unknown) => e);
    expect((err2 as SonioxHttpError).statusCode).toBe(400);
    expect((err2 as SonioxHttpError).bodyText).toContain('invalid_request');
  });
});
