// GET /metrics: Prometheus text from prom-client, with the process's event-loop delay, HTTP requests by route
// pattern and status, and the node's live-work gauges; closed to all but a bearer token when one is configured.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody, makeSpeech, startParlance, streamRealtime, tempDir, type Parlance } from '../harness.js';

let open: Parlance;
let closed: Parlance;
beforeAll(async () => {
  [open, closed] = await Promise.all([startParlance(), startParlance({ env: { PARLANCE_METRICS_TOKEN: 'scrape-secret' } })]);
});
afterAll(async () => Promise.all([open?.stop(), closed?.stop()]));

/** The value of one sample line (`name{labels} value`), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GET /metrics', () => {
  it('reports event-loop delay, requests by route pattern and status, and live work', async () => {
    for (let i = 0; i < 3; i++) expect((await open.request('/v1/files?limit=5')).status).toBe(200);
    expect((await open.request('/v1/files/does-not-exist')).status).toBe(404);
    const res = await open.request('/metrics', { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(sample(text, 'nodejs_eventloop_lag_p99_seconds')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'parlance_http_request_duration_seconds_count{method="GET",route="/v1/files",status="200"}')).toBe(3);
    // The route pattern, not the path: ids do not make new series.
    expect(sample(text, 'parlance_http_request_duration_seconds_count{method="GET",route="/v1/files/:file_id",status="404"}')).toBe(1);
    expect(text).not.toMatch(/does-not-exist/);
    expect(sample(text, 'parlance_tts_active')).toBe(0);
    expect(sample(text, 'parlance_realtime_sessions')).toBe(0);
    expect(sample(text, 'parlance_tts_synthesis_waiting')).toBe(0);
  });

  it('reports how live final tokens were made and how long after their audio they went out', async () => {
    const wav = await makeSpeech(path.join(tempDir('metrics-'), 'two.wav'), 'The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background.', { padSeconds: 1 });
    const frames = await streamRealtime(open, readFileSync(wav).subarray(44));
    const finals = frames.flatMap((f) => f.tokens).filter((t) => t.is_final && !t.text.startsWith('<'));
    expect(finals.length).toBeGreaterThan(3);
    const text = await (await open.request('/metrics', { key: null })).text();
    // Every final token of the session is one observation; the audio went in faster than real time, so lags are 0+.
    expect(sample(text, 'parlance_realtime_final_token_lag_seconds_count')).toBe(finals.length);
    const outcomes = ['decoded', 'skipped', 'late', 'failed'].map((o) => sample(text, `parlance_realtime_second_pass_total{outcome="${o}"}`) ?? 0);
    expect(outcomes.reduce((a, b) => a + b)).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it('with PARLANCE_METRICS_TOKEN, answers only its bearer token (an API key is not enough)', async () => {
    const none = await closed.request('/metrics', { key: null });
    expect(none.status).toBe(401);
    expect((await errorBody(none)).error_type).toBe('unauthenticated');
    expect((await closed.request('/metrics')).status).toBe(401);
    const ok = await closed.request('/metrics', { key: null, headers: { authorization: 'Bearer scrape-secret' } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toMatch(/process_cpu_seconds_total/);
  });
});
