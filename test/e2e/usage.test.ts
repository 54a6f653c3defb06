// Usage metering and billing, black-box: a real server, real engines (flite speech, pocketsphinx, espeak),
// the `ws` client and the admin CLI. Prices are set through the environment so costs can be checked
// exactly (decimal.js) from each record's own quantities.
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { errorBody, gatedAudioServer, makeSpeech, startParlance, tempDir, uploadFile, waitFor, type GatedAudioServer, type Parlance } from '../harness.js';
import { openTts, probeAudio } from './tts-helpers.js';

const execFileP = promisify(execFile);
const PRICE = { async: '0.001', rt: '0.002', char: '0.0001', outSecond: '0.0003' };
const PRICES = [
  `parlance-async-en-v1:input_audio_second=${PRICE.async}`,
  `parlance-rt-en-v1:input_audio_second=${PRICE.rt}`,
  `*:input_character=${PRICE.char}`,
  `*:output_audio_second=${PRICE.outSecond}`,
].join(',');
const SENTENCE = 'the quick brown fox jumps over the lazy dog';
const work = tempDir('parlance-usage-e2e-');
const testStart = new Date(Date.now() - 60_000).toISOString();

let s: Parlance;
let speechWav: string;
let pcm: Buffer;
let gate: GatedAudioServer;

interface Log {
  uuid: string;
  request_id: string;
  request_scope: string;
  client_reference_id: string | null;
  model: string;
  start_time: string;
  end_time: string;
  input_text_tokens: number;
  input_audio_tokens: number;
  input_audio_duration_ms: number;
  output_text_tokens: number;
  output_audio_tokens: number;
  output_audio_duration_ms: number;
  cost_usd: string;
  input_cost_usd: string;
  input_text_cost_usd: string;
  input_audio_cost_usd: string;
  output_cost_usd: string;
  output_text_cost_usd: string;
  output_audio_cost_usd: string;
}

/** quantity × price rounded half up to the nano-dollar, as the server meters. */
const cost = (quantity: Decimal.Value, price: string) => new Decimal(quantity).mul(price).toDecimalPlaces(9, Decimal.ROUND_HALF_UP);
const window = () => `start_time=${encodeURIComponent(testStart)}&end_time=${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}`;

async function allLogs(extra = ''): Promise<Log[]> {
  const out: Log[] = [];
  let cursor: string | null = null;
  do {
    const res = await s.request(`/v1/usage-logs?${window()}${extra}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.status).toBe(200);
    const page = (await res.json()) as { usage_logs: Log[]; next_page_cursor: string | null };
    out.push(...page.usage_logs);
    cursor = page.next_page_cursor;
  } while (cursor);
  return out;
}

const logFor = (ref: string) =>
  waitFor(
    async () => (await allLogs()).find((l) => l.client_reference_id === ref),
    (l) => l !== undefined,
    20_000,
  ) as Promise<Log>;

const upload = (file: string) => uploadFile(s, file);

const createTranscription = (body: Record<string, unknown>) =>
  s.request('/v1/transcriptions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const getTranscription = async (id: string) => (await (await s.request(`/v1/transcriptions/${id}`)).json()) as { status: string; error_type?: string };
const ttsBody = (extra: Record<string, unknown> = {}) => ({ model: 'tts-rt-v2', voice: 'Adrian', language: 'en', audio_format: 'wav', ...extra });
const postTts = (body: Record<string, unknown>) =>
  s.request('/tts', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

interface SttConn {
  ws: WebSocket;
  frames: Record<string, unknown>[];
  closed: Promise<number>;
}

async function openStt(extra: Record<string, unknown> = {}): Promise<SttConn> {
  const ws = new WebSocket(`${s.url.replace('http', 'ws')}/transcribe-websocket`);
  const frames: Record<string, unknown>[] = [];
  ws.on('message', (d) => frames.push(JSON.parse((d as Buffer).toString('utf8')) as Record<string, unknown>));
  const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  ws.send(JSON.stringify({ api_key: s.apiKey, model: 'stt-rt-v4', audio_format: 'pcm_s16le', sample_rate: 16000, num_channels: 1, ...extra }));
  return { ws, frames, closed };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  speechWav = await makeSpeech(path.join(work, 'fox.wav'), SENTENCE);
  pcm = (
    await execFileP('ffmpeg', ['-v', 'error', '-i', speechWav, '-f', 's16le', '-ac', '1', '-ar', '16000', 'pipe:1'], {
      encoding: 'buffer',
      maxBuffer: 64 << 20,
    })
  ).stdout as Buffer;
  gate = await gatedAudioServer(readFileSync(speechWav));
  s = await startParlance({
    env: {
      PARLANCE_USAGE_PRICES: PRICES,
      PARLANCE_USAGE_CHECK_INTERVAL_SECONDS: '0.25',
      PARLANCE_TRANSCRIPTION_CONCURRENCY: '1',
      PARLANCE_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
    },
  });
});
afterAll(async () => {
  gate?.release();
  await s?.stop();
  await gate?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('metering of every billable action', () => {
  it('TTS over HTTP: characters in and generated seconds out, at the model prices', async () => {
    const text = 'Metering counts every character of this sentence.';
    const res = await postTts(ttsBody({ text, client_reference_id: 'tts-http-1' }));
    expect(res.status).toBe(200);
    const audio = await probeAudio(Buffer.from(await res.arrayBuffer()), 'wav', 0);
    const log = await logFor('tts-http-1');
    expect(log).toMatchObject({
      model: 'parlance-tts-v1',
      request_scope: 'public_api',
      request_id: res.headers.get('x-request-id'),
      input_text_tokens: text.length,
    });
    expect(Math.abs(log.output_audio_duration_ms - audio.seconds * 1000)).toBeLessThan(30);
    expect(log.output_audio_tokens).toBe(Math.ceil(log.output_audio_duration_ms / 50));
    const expected = { in: cost(text.length, PRICE.char), out: cost(new Decimal(log.output_audio_duration_ms).div(1000), PRICE.outSecond) };
    expect(new Decimal(log.input_text_cost_usd).eq(expected.in)).toBe(true);
    expect(new Decimal(log.output_audio_cost_usd).eq(expected.out)).toBe(true);
    expect(new Decimal(log.cost_usd).eq(expected.in.plus(expected.out))).toBe(true);
    expect(Date.parse(log.end_time)).toBeGreaterThanOrEqual(Date.parse(log.start_time));
  });

  it('TTS over WebSocket: one record per stream', async () => {
    const c = await openTts(s.url);
    const text = 'One stream, one usage record.';
    c.send({ api_key: s.apiKey, stream_id: 'a', ...ttsBody({ audio_format: 'pcm_s16le', sample_rate: 16000, client_reference_id: 'tts-ws-1' }) });
    c.send({ stream_id: 'a', text, text_end: true });
    await c.next((f) => f.terminated === true);
    const bytes = c.frames.filter((f) => typeof f.audio === 'string').reduce((n, f) => n + Buffer.from(f.audio as string, 'base64').length, 0);
    c.close();
    const log = await logFor('tts-ws-1');
    expect(log).toMatchObject({ model: 'parlance-tts-v1', input_text_tokens: text.length });
    expect(Math.abs(log.output_audio_duration_ms - (bytes / 2 / 16000) * 1000)).toBeLessThan(30);
    expect(new Decimal(log.cost_usd).eq(cost(text.length, PRICE.char).plus(cost(new Decimal(log.output_audio_duration_ms).div(1000), PRICE.outSecond)))).toBe(
      true,
    );
  });

  it('async transcription: the audio seconds of the file at the async model price', async () => {
    const res = await createTranscription({ model: 'stt-async-v4', file_id: await upload(speechWav), client_reference_id: 'async-1' });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    expect(
      (
        await waitFor(
          () => getTranscription(id),
          (r) => r.status === 'completed' || r.status === 'failed',
        )
      ).status,
    ).toBe('completed');
    const transcript = (await (await s.request(`/v1/transcriptions/${id}/transcript`)).json()) as { tokens: unknown[] };
    const log = await logFor('async-1');
    // The record's id is the transcription's: a job re-run after a crash cannot meter twice.
    expect(log).toMatchObject({
      uuid: id,
      model: 'parlance-async-en-v1',
      output_text_tokens: transcript.tokens.length,
      input_audio_duration_ms: pcm.length / 32,
    });
    expect(new Decimal(log.input_audio_cost_usd).eq(cost(new Decimal(log.input_audio_duration_ms).div(1000), PRICE.async))).toBe(true);
    expect(log.cost_usd).toBe(log.input_audio_cost_usd);
  });

  it('real-time session: the audio seconds streamed, once the session ends', async () => {
    const c = await openStt({ client_reference_id: 'rt-1' });
    for (let i = 0; i < pcm.length; i += 3200) c.ws.send(pcm.subarray(i, i + 3200));
    c.ws.send(Buffer.alloc(0));
    expect(await c.closed).toBe(1000);
    expect(c.frames[c.frames.length - 1]).toMatchObject({ finished: true });
    const log = await logFor('rt-1');
    expect(log).toMatchObject({ model: 'parlance-rt-en-v1', input_audio_duration_ms: pcm.length / 32, input_audio_tokens: Math.ceil(pcm.length / 32 / 50) });
    expect(log.output_text_tokens).toBeGreaterThan(3);
    expect(new Decimal(log.cost_usd).eq(cost(new Decimal(pcm.length / 32).div(1000), PRICE.rt))).toBe(true);
  });

  it('monthly usage adds up exactly, to the logs and across projects', async () => {
    const logs = await allLogs();
    expect(logs.length).toBeGreaterThanOrEqual(4);
    const total = logs.reduce((n, l) => n.plus(l.cost_usd), new Decimal(0));
    const res = await s.request('/v1/organization/usage/monthly');
    expect(res.status).toBe(200);
    const m = (await res.json()) as Record<string, unknown> & { projects: Record<string, string>[] };
    expect(m.month).toBe(new Date().toISOString().slice(0, 7));
    expect(new Decimal(m.usage_usd as string).eq(total)).toBe(true);
    expect(new Decimal(m.invoiced_usage_usd as string).eq(total)).toBe(true); // invoice billing is the default
    expect(new Decimal(m.api_usage_usd as string).eq(total)).toBe(true);
    expect(m).toMatchObject({ free_usage_usd: '0', playground_usage_usd: '0', monthly_budget_usd: null, remaining_budget_usd: null, budget_exhausted: false });
    expect(m.projects.reduce((n, p) => n.plus(p.usage_usd!), new Decimal(0)).eq(total)).toBe(true);
    const other = (await (await s.request('/v1/organization/usage/monthly?month=2020-02')).json()) as Record<string, unknown>;
    expect(other).toMatchObject({
      month: '2020-02',
      usage_usd: '0',
      monthly_budget_usd: null,
      monthly_budget_notification_usd: null,
      remaining_budget_usd: null,
      budget_exhausted: null,
    });
    const bad = await s.request('/v1/organization/usage/monthly?month=2020-13');
    expect(bad.status).toBe(400);
    expect((await errorBody(bad)).validation_errors[0]).toMatchObject({ location: 'month' });
  });

  it('usage logs page with a signed cursor in both orders; end_time must be after start_time', async () => {
    const all = await allLogs();
    const asc = await allLogs('&limit=1');
    expect(asc.map((l) => l.uuid)).toEqual(all.map((l) => l.uuid));
    const ends = asc.map((l) => l.end_time);
    expect([...ends].sort()).toEqual(ends);
    const desc = await allLogs('&limit=2&sort=end_time_desc');
    expect(desc.map((l) => l.uuid)).toEqual([...asc].reverse().map((l) => l.uuid));
    const t = encodeURIComponent(testStart);
    const same = await s.request(`/v1/usage-logs?start_time=${t}&end_time=${t}`);
    expect(same.status).toBe(400);
    expect(await errorBody(same)).toMatchObject({ error_type: 'invalid_request', validation_errors: [expect.objectContaining({ location: 'end_time' })] });
    const tampered = await s.request(`/v1/usage-logs?${window()}&cursor=abc.def`);
    expect((await errorBody(tampered)).error_type).toBe('invalid_cursor');
    const noKey = await s.request(`/v1/usage-logs?${window()}`, { key: null });
    expect(noKey.status).toBe(401);
  });
});

describe('402 on every surface, checked before the request runs', () => {
  const cases: [string, string[], string[]][] = [
    ['organization_balance_exhausted', ['set-balance', '--available-usd', '0', '--invoice-billing', 'off'], ['set-balance', '--invoice-billing', 'on']],
    ['organization_monthly_budget_exhausted', ['set-budget', '--monthly-usd', '0'], ['set-budget', '--monthly-usd', 'none']],
    [
      'project_monthly_budget_exhausted',
      ['set-budget', '--project', '@project', '--monthly-usd', '0'],
      ['set-budget', '--project', '@project', '--monthly-usd', 'none'],
    ],
  ];
  const args = (a: string[]) => a.map((x) => (x === '@project' ? s.projectId : x));

  it.each(cases)('%s: REST create, TTS HTTP, TTS WebSocket and real-time STT start', async (type, set, reset) => {
    await s.admin(...args(set));
    try {
      const created = await createTranscription({ model: 'stt-async-v4', audio_url: `${gate.url}/a.wav` });
      expect(created.status).toBe(402);
      expect(await errorBody(created)).toMatchObject({ status_code: 402, error_type: type });

      const tts = await postTts(ttsBody({ text: 'refused' }));
      expect(tts.status).toBe(402);
      expect(await tts.json()).toMatchObject({ error_code: 402, error_type: type });

      const ws = await openTts(s.url);
      ws.send({ api_key: s.apiKey, stream_id: 'x', ...ttsBody() });
      expect(await ws.next((f) => f.error_type !== undefined)).toMatchObject({ stream_id: 'x', error_code: 402, error_type: type });
      await ws.next((f) => f.terminated === true);
      ws.close();

      const stt = await openStt();
      expect(await stt.closed).toBe(1000);
      expect(stt.frames).toEqual([expect.objectContaining({ tokens: [], error_code: 402, error_type: type })]);
      const balance = (await (await s.request('/v1/organization/balance')).json()) as Record<string, unknown>;
      expect(balance.balance_exhausted).toBe(type === 'organization_balance_exhausted');
      if (type === 'organization_monthly_budget_exhausted') {
        const m = (await (await s.request('/v1/organization/usage/monthly')).json()) as Record<string, unknown>;
        expect(m).toMatchObject({ monthly_budget_usd: '0', remaining_budget_usd: '0', budget_exhausted: true });
      }
    } finally {
      await s.admin(...args(reset));
    }
  });

  it('async job start: downloading and queued jobs fail with the budget error type', async () => {
    gate.hold();
    const held = (await (await createTranscription({ model: 'stt-async-v4', audio_url: `${gate.url}/held.wav` })).json()) as { id: string };
    await waitFor(
      () => getTranscription(held.id),
      (r) => r.status === 'downloading',
    );
    const queued = (await (await createTranscription({ model: 'stt-async-v4', file_id: await upload(speechWav) })).json()) as { id: string };
    expect((await getTranscription(queued.id)).status).toBe('queued');
    await s.admin('set-budget', '--project', s.projectId, '--monthly-usd', '0');
    try {
      gate.release();
      for (const id of [held.id, queued.id])
        expect(
          await waitFor(
            () => getTranscription(id),
            (r) => r.status === 'failed' || r.status === 'completed',
          ),
        ).toMatchObject({
          status: 'failed',
          error_type: 'project_monthly_budget_exhausted',
        });
    } finally {
      await s.admin('set-budget', '--project', s.projectId, '--monthly-usd', 'none');
    }
  });

  it('a running real-time session that exhausts the balance is ended with the 402 error frame', async () => {
    // 0.004 USD at 0.002 USD per second: two seconds of audio.
    await s.admin('set-balance', '--available-usd', '0.004', '--free-usd', '0', '--used-usd', '0', '--invoice-billing', 'off');
    try {
      const c = await openStt({ client_reference_id: 'rt-exhaust' });
      // Real-time pace (100 ms chunks, 100 ms apart), speech repeated, at most 12 s of audio.
      let sentMs = 0;
      for (let i = 0; c.ws.readyState === c.ws.OPEN && sentMs < 12_000; i = (i + 3200) % pcm.length, sentMs += 100) {
        c.ws.send(pcm.subarray(i, i + 3200));
        await sleep(100);
      }
      expect(await c.closed).toBe(1000);
      const last = c.frames[c.frames.length - 1]!;
      expect(last).toMatchObject({ tokens: [], error_code: 402, error_type: 'organization_balance_exhausted' });
      // The server ended it while the client still had audio to send: it did not run on to the end.
      expect(sentMs).toBeLessThan(12_000);
      const log = await logFor('rt-exhaust');
      expect(log.input_audio_duration_ms).toBeGreaterThanOrEqual(1900);
      const balance = (await (await s.request('/v1/organization/balance')).json()) as Record<string, unknown>;
      // The session is recorded in full; the balance stops at zero.
      expect(balance).toMatchObject({ available_balance_usd: '0', used_balance_usd: '0.004', balance_exhausted: true, invoice_billing_enabled: false });
    } finally {
      await s.admin('set-balance', '--invoice-billing', 'on');
    }
  });

  it('a running real-time session that reaches the project budget is ended with project_monthly_budget_exhausted', async () => {
    const month = (await (await s.request('/v1/organization/usage/monthly')).json()) as { projects: { id: string; usage_usd: string }[] };
    const used = month.projects.find((p) => p.id === s.projectId)!.usage_usd;
    // Two more seconds of real-time audio reach the budget.
    await s.admin('set-budget', '--project', s.projectId, '--monthly-usd', new Decimal(used).plus('0.004').toFixed());
    try {
      const c = await openStt({ client_reference_id: 'rt-budget' });
      let sentMs = 0;
      for (let i = 0; c.ws.readyState === c.ws.OPEN && sentMs < 12_000; i = (i + 3200) % pcm.length, sentMs += 100) {
        c.ws.send(pcm.subarray(i, i + 3200));
        await sleep(100);
      }
      expect(await c.closed).toBe(1000);
      expect(sentMs).toBeLessThan(12_000);
      expect(c.frames[c.frames.length - 1]).toMatchObject({ tokens: [], error_code: 402, error_type: 'project_monthly_budget_exhausted' });
      expect((await logFor('rt-budget')).input_audio_duration_ms).toBeGreaterThanOrEqual(1900);
      const refused = await openStt();
      expect(await refused.closed).toBe(1000);
      expect(refused.frames).toEqual([expect.objectContaining({ error_type: 'project_monthly_budget_exhausted' })]);
    } finally {
      await s.admin('set-budget', '--project', s.projectId, '--monthly-usd', 'none');
    }
  });
});

describe('balance, grants, prices and notifications', () => {
  it('grants are drawn first; the balance endpoint shows every field', async () => {
    await s.admin('set-balance', '--available-usd', '0', '--free-usd', '0', '--used-usd', '0', '--invoice-billing', 'off');
    try {
      await s.admin('grant', '--usd', '0.05');
      await s.admin('top-up', '--usd', '0.02');
      await s.admin('set-balance', '--autopay', 'on', '--autopay-threshold-usd', '5', '--autopay-amount-usd', '20', '--payment-method', 'on');
      const before = (await (await s.request('/v1/organization/balance')).json()) as Record<string, unknown>;
      expect(before).toEqual({
        available_balance_usd: '0.07',
        free_balance_usd: '0.05',
        used_balance_usd: '0',
        invoice_billing_enabled: false,
        balance_exhausted: false,
        autopay_enabled: true,
        autopay_threshold_usd: '5',
        autopay_amount_usd: '20',
        has_payment_method: true,
        has_payment_error: false,
      });
      const monthBefore = (await (await s.request('/v1/organization/usage/monthly')).json()) as Record<string, string>;
      const res = await postTts(ttsBody({ text: 'Paid for by the grant.', client_reference_id: 'granted' }));
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      const c = new Decimal((await logFor('granted')).cost_usd);
      const after = (await (await s.request('/v1/organization/balance')).json()) as Record<string, string>;
      expect(after).toMatchObject({
        available_balance_usd: new Decimal('0.07').minus(c).toFixed(),
        free_balance_usd: new Decimal('0.05').minus(c).toFixed(),
        used_balance_usd: c.toFixed(),
      });
      const monthAfter = (await (await s.request('/v1/organization/usage/monthly')).json()) as Record<string, string>;
      expect(new Decimal(monthAfter.free_usage_usd!).minus(monthBefore.free_usage_usd!).eq(c)).toBe(true);
      const invalid = await s.admin('grant', '--usd', '-1').then(
        () => 'accepted',
        (e: Error) => e.message,
      );
      expect(invalid).toMatch(/non-negative decimal/);
    } finally {
      await s.admin(
        'set-balance',
        '--invoice-billing',
        'on',
        '--autopay',
        'off',
        '--autopay-threshold-usd',
        'none',
        '--autopay-amount-usd',
        'none',
        '--payment-method',
        'off',
      );
    }
  });

  it('set-price changes the price of the next request; "default" restores the settings price', async () => {
    await s.admin('set-price', '--model', 'parlance-tts-v1', '--unit', 'input_character', '--usd', '0.5');
    try {
      await sleep(1100); // overrides are re-read at most once a second
      const text = 'Expensive words.';
      const res = await postTts(ttsBody({ text, client_reference_id: 'priced' }));
      await res.arrayBuffer();
      expect((await logFor('priced')).input_text_cost_usd).toBe(new Decimal(text.length).mul('0.5').toFixed());
    } finally {
      await s.admin('set-price', '--model', 'parlance-tts-v1', '--unit', 'input_character', '--usd', 'default');
    }
    const prices = await s.admin<{ prices: { model: string; unit: string; price_usd: string; origin: string }[] }>('list-prices');
    expect(prices.prices).toContainEqual({ model: '*', unit: 'input_character', price_usd: PRICE.char, origin: 'settings' });
    expect(prices.prices.some((p) => p.origin === 'admin')).toBe(false);
  });

  it('logs one budget notification event per month when usage reaches the threshold', async () => {
    await s.admin('set-budget', '--notify-usd', '0.000001');
    const project = await s.admin('set-budget', '--project', s.projectId, '--notify-usd', '0.000002');
    expect(project).toEqual({ project_id: s.projectId, monthly_budget_usd: null, monthly_budget_notification_usd: '0.000002' });
    try {
      for (const ref of ['notify-1', 'notify-2']) {
        const res = await postTts(ttsBody({ text: 'Over the threshold.', client_reference_id: ref }));
        await res.arrayBuffer();
        await logFor(ref);
      }
      const notifications = () =>
        s
          .stderr()
          .split('\n')
          .filter((l) => l.includes('"budget_notification"'))
          .map((l) => JSON.parse(l) as Record<string, unknown>);
      const events = await waitFor(
        async () => notifications(),
        (e) => e.length >= 2,
        10_000,
        20,
      );
      expect(events.map((e) => e.scope)).toEqual(['organization', 'project']);
      const month = new Date().toISOString().slice(0, 7);
      expect(events[0]).toMatchObject({ organization_id: s.organizationId, month, monthly_budget_notification_usd: '0.000001' });
      expect(events[1]).toMatchObject({ organization_id: s.organizationId, project_id: s.projectId, month, monthly_budget_notification_usd: '0.000002' });
      const m = (await (await s.request('/v1/organization/usage/monthly')).json()) as Record<string, unknown>;
      expect(m.monthly_budget_notification_usd).toBe('0.000001');
    } finally {
      await s.admin('set-budget', '--notify-usd', 'none');
      await s.admin('set-budget', '--project', s.projectId, '--notify-usd', 'none');
    }
  });

  it('admin billing commands refuse bad input with a non-zero exit and a message', async () => {
    const refused = (...a: string[]) =>
      s.admin(...a).then(
        () => 'accepted',
        (e: Error) => e.message,
      );
    await s.admin('set-balance', '--available-usd', '1', '--free-usd', '0');
    expect(await refused('set-balance', '--free-usd', '5')).toMatch(/cannot exceed the available balance/);
    expect(await refused('set-balance', '--available-usd', '1e3')).toMatch(/non-negative decimal/);
    expect(await refused('set-price', '--model', '*', '--unit', 'per_word', '--usd', '1')).toMatch(/per_word/);
    expect(await refused('set-price', '--model', '*', '--unit', 'input_character', '--usd', 'cheap')).toMatch(/non-negative decimal/);
    expect(await refused('set-budget')).toMatch(/--monthly-usd/);
    expect(await refused('set-budget', '--monthly-usd', '-3')).toMatch(/non-negative decimal/);
    expect(await refused('set-budget', '--project', '00000000-0000-4000-8000-000000000000', '--monthly-usd', '3')).toMatch(/no such project/);
    const balance = (await (await s.request('/v1/organization/balance')).json()) as Record<string, unknown>;
    expect(balance).toMatchObject({ available_balance_usd: '1', free_balance_usd: '0' });
  }, 60_000);

  it("a playground key's usage is counted as playground usage", async () => {
    const key = await s.admin<{ api_key: string }>('create-key', '--project', s.projectId, '--playground', '--name', 'playground');
    const before = (await (await s.request('/v1/organization/usage/monthly')).json()) as Record<string, string>;
    const res = await s.request('/tts', {
      method: 'POST',
      key: key.api_key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ttsBody({ text: 'From the playground.', client_reference_id: 'playground-1' })),
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const log = await logFor('playground-1');
    expect(log.request_scope).toBe('playground');
    const after = (await (await s.request('/v1/organization/usage/monthly')).json()) as Record<string, string> & { projects: Record<string, string>[] };
    expect(new Decimal(after.playground_usage_usd!).minus(before.playground_usage_usd!).eq(log.cost_usd)).toBe(true);
    expect(after.api_usage_usd).toBe(before.api_usage_usd);
    expect(new Decimal(after.api_usage_usd!).plus(after.playground_usage_usd!).eq(after.usage_usd!)).toBe(true);
  });
});
