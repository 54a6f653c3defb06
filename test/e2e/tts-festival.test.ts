// Festival's Debian voices against a real server and real festival: every installed voice in its own
// language with real non-ASCII text (decoded back with ffmpeg, non-silent, plausible duration), the
// model's languages and voices discovered from festival, full voice metadata and the listing filters,
// voice/language mismatches refused before audio, speed on every kind of festival voice (diphone, HTS,
// cluster units), and a killed synthesizer mid-stream: the HTTP response is cut (no clean end) and the
// WebSocket stream ends with an error frame + terminated while the connection, the other streams and the
// server keep working.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody, startParlance, type Parlance } from '../harness.js';
import { openTts, probeAudio, streamAudio } from './tts-helpers.js';

const execFileP = promisify(execFile);
const MODEL = 'parlance-tts-festival-v1';

let s: Parlance;
beforeAll(async () => {
  s = await startParlance();
});
afterAll(async () => s?.stop());

/** Each Debian festival voice, its language and a sentence with that language's own letters. */
const SAMPLES: { voice: string; language: string; gender: string; text: string }[] = [
  { voice: 'Kal', language: 'en', gender: 'male', text: 'Hello world. This is a festival voice.' },
  { voice: 'Keith', language: 'en', gender: 'male', text: 'Hello world. This is a festival voice.' },
  { voice: 'Sarah', language: 'en', gender: 'female', text: 'Hello world. This is a festival voice.' },
  { voice: 'Ona', language: 'ca', gender: 'female', text: 'Bon dia. Això és una prova de veu en català, amb força.' },
  { voice: 'Dita', language: 'cs', gender: 'female', text: 'Dobrý den. Příliš žluťoučký kůň úpěl ďábelské ódy.' },
  { voice: 'Kuba', language: 'cs', gender: 'male', text: 'Dobrý den. Příliš žluťoučký kůň úpěl ďábelské ódy.' },
  { voice: 'Marek', language: 'cs', gender: 'male', text: 'Dobrý den. Příliš žluťoučký kůň úpěl ďábelské ódy.' },
  { voice: 'Petr', language: 'cs', gender: 'male', text: 'Dobrý den. Příliš žluťoučký kůň úpěl ďábelské ódy.' },
  { voice: 'Leena', language: 'fi', gender: 'female', text: 'Hyvää päivää. Mitä kuuluu tänään, ystävä?' },
  { voice: 'Mikko', language: 'fi', gender: 'male', text: 'Hyvää päivää. Mitä kuuluu tänään, ystävä?' },
  { voice: 'Arjun', language: 'hi', gender: 'male', text: 'नमस्ते, आप कैसे हैं? मैं ठीक हूँ।' },
  { voice: 'Lucia', language: 'it', gender: 'female', text: 'Buongiorno, come stai? Perché è così bello.' },
  { voice: 'Paolo', language: 'it', gender: 'male', text: 'Buongiorno, come stai? Perché è così bello.' },
  { voice: 'Sachin', language: 'mr', gender: 'male', text: 'नमस्कार, तुम्ही कसे आहात? मी ठीक आहे.' },
  { voice: 'Nikolai', language: 'ru', gender: 'male', text: 'Здравствуйте, как дела? Это проверка русского голоса.' },
  { voice: 'Ravi', language: 'te', gender: 'male', text: 'నమస్కారం, మీరు ఎలా ఉన్నారు?' },
];

function tts(body: Record<string, unknown>, signal?: AbortSignal): Promise<Response> {
  return s.request('/tts', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal });
}

const base = { model: MODEL, language: 'en', voice: 'Kal', audio_format: 'pcm_s16le', sample_rate: 16000 };

/** RMS of s16le samples. */
function rms(pcm: Buffer): number {
  let sum = 0;
  const n = pcm.length >> 1;
  for (let i = 0; i < n; i++) sum += pcm.readInt16LE(i * 2) ** 2;
  return Math.sqrt(sum / Math.max(1, n));
}

/** Fraction of 20 ms frames louder than `threshold` RMS: speech, not a click or noise floor. */
function voicedFraction(pcm: Buffer, rate: number, threshold = 500): number {
  const frame = Math.round(rate * 0.02) * 2;
  let loud = 0;
  let total = 0;
  for (let off = 0; off + frame <= pcm.length; off += frame, total++) if (rms(pcm.subarray(off, off + frame)) > threshold) loud++;
  return loud / Math.max(1, total);
}

async function seconds(body: Record<string, unknown>): Promise<number> {
  const res = await tts(body);
  expect(res.status, JSON.stringify(body)).toBe(200);
  return (await probeAudio(Buffer.from(await res.arrayBuffer()), 'pcm_s16le', 16000)).seconds;
}

describe('festival model: languages and voices from the installed festvox packages', () => {
  it('GET /v1/tts-models lists every installed language and voice', async () => {
    const { models } = (await (await s.request('/v1/tts-models')).json()) as {
      models: { id: string; name: string; languages: { code: string; name: string }[]; voices: { id: string; description: string; gender: string }[] }[];
    };
    const m = models.find((x) => x.id === MODEL)!;
    expect(m.languages.map((l) => l.code).sort()).toEqual(['ca', 'cs', 'en', 'fi', 'hi', 'it', 'mr', 'ru', 'te']);
    expect(m.languages.find((l) => l.code === 'cs')!.name).toBe('Czech');
    expect(m.name).toMatch(/festival/);
    for (const x of SAMPLES) {
      const v = m.voices.find((y) => y.id === x.voice);
      expect(v, x.voice).toBeDefined();
      expect(v!.gender, x.voice).toBe(x.gender);
      expect(v!.description.length, x.voice).toBeGreaterThan(10);
    }
    // No voice is listed twice, and no engine voice is offered both curated and raw.
    expect(new Set(m.voices.map((v) => v.id.toLowerCase())).size).toBe(m.voices.length);
    expect(m.voices.length).toBe(SAMPLES.length + 1); // + Adrian (kal, like the other models' Adrian)
  });

  it('GET /v1/tts-voices gives full metadata and its filters work, including the language extension', async () => {
    const list = async (q: string) => {
      const res = await s.request(`/v1/tts-voices?model=${MODEL}&${q}`);
      expect(res.status, q).toBe(200);
      return ((await res.json()) as { voices: Record<string, unknown>[] }).voices;
    };
    const all = await list('limit=200');
    for (const v of all) {
      expect(Object.keys(v).sort()).toEqual(['accent', 'age', 'description', 'gender', 'id', 'style', 'use_case']);
      expect(['young', 'middle_aged', 'old']).toContain(v.age);
      expect((v.use_case as string[]).length).toBeGreaterThan(0);
      expect((v.style as string[]).length).toBeGreaterThan(0);
    }
    expect(all.find((v) => v.id === 'Ona')).toMatchObject({ gender: 'female', accent: 'central_catalan' });
    const ids = (vs: Record<string, unknown>[]) => vs.map((v) => v.id);
    expect(ids(await list('language=cs'))).toEqual(['Dita', 'Kuba', 'Marek', 'Petr']);
    expect(ids(await list('language=cs&gender=female'))).toEqual(['Dita']);
    expect(ids(await list('language=en&gender=female'))).toEqual(['Sarah']);
    expect(ids(await list('accent=indian'))).toEqual(['Arjun', 'Ravi', 'Sachin']);
    expect(ids(await list('accent=CZECH&age=young'))).toEqual(['Kuba']);
    expect(ids(await list('language=it&use_case=narration'))).toEqual(['Paolo']);
    expect(ids(await list('style=natural'))).toEqual(['Nikolai']);
    expect(await list('language=de')).toEqual([]);
    // espeak-ng voices speak every language of the model: the language filter keeps them all.
    const espeakAll = (await (await s.request('/v1/tts-voices?model=parlance-tts-espeak-v1&limit=200')).json()) as { voices: unknown[] };
    const espeakDe = (await (await s.request('/v1/tts-voices?model=parlance-tts-espeak-v1&limit=200&language=de')).json()) as { voices: unknown[] };
    expect(espeakDe.voices.length).toBe(espeakAll.voices.length);
    const tooLong = await s.request(`/v1/tts-voices?model=${MODEL}&language=${'x'.repeat(17)}`);
    expect(tooLong.status).toBe(400);
    expect((await errorBody(tooLong)).error_type).toBe('invalid_request');
    const atLimit = await s.request(`/v1/tts-voices?model=${MODEL}&language=${'x'.repeat(16)}`);
    expect(atLimit.status).toBe(200);
  });
});

describe('POST /tts with every festival voice in its language', () => {
  for (const x of SAMPLES) {
    it(`${x.voice} (${x.language}) speaks "${x.text.slice(0, 24)}…"`, async () => {
      const res = await tts({ ...base, language: x.language, voice: x.voice, text: x.text });
      expect(res.status).toBe(200);
      const pcm = Buffer.from(await res.arrayBuffer());
      const a = await probeAudio(pcm, 'pcm_s16le', 16000);
      // Plausible for one or two short sentences; too short would mean letters were dropped by a wrong coding.
      expect(a.seconds).toBeGreaterThan(1.2);
      expect(a.seconds).toBeLessThan(12);
      expect(voicedFraction(pcm, 16000)).toBeGreaterThan(0.3);
    });
  }

  it("text is converted to each voice's festival coding: the audio matches festival fed iconv-converted bytes", async () => {
    // Reference: text2wave run directly on the text converted by glibc's iconv (independent of our encoder).
    const direct = async (voice: string, text: string, coding: string | null): Promise<number> => {
      const out = path.join(tmpdir(), `festival-ref-${randomBytes(6).toString('hex')}.wav`);
      const convert = coding ? `iconv -f UTF-8 -t ${coding} | ` : '';
      const child = execFile('sh', ['-c', `${convert}text2wave -o ${out} -F 16000 -eval '(voice_${voice})'`]);
      child.stdin!.end(text);
      await new Promise((resolve) => child.once('close', resolve));
      try {
        return (await probeAudio(readFileSync(out), 'wav', 0)).seconds;
      } finally {
        rmSync(out, { force: true });
      }
    };
    const cases: [string, string, string, string, string][] = [
      ['Dita', 'czech_dita', 'cs', 'ISO-8859-2', 'Dobrý den. Příliš žluťoučký kůň úpěl ďábelské ódy.'],
      ['Ona', 'upc_ca_ona_hts', 'ca', 'ISO-8859-15', 'Això és una prova, amb força.'],
      ['Leena', 'suo_fi_lj_diphone', 'fi', 'ISO-8859-1', 'Hyvää päivää, ystävä.'],
      ['Nikolai', 'msu_ru_nsh_clunits', 'ru', 'UTF-8', 'Щука, жёлудь, съешь же ещё этих мягких булок.'],
    ];
    // The voices are independent: synthesise them side by side (each case's API and reference runs too).
    const measured = await Promise.all(
      cases.map(async ([voice, engineVoice, language, coding, text]) => {
        const [api, ref] = await Promise.all([seconds({ ...base, voice, language, text }), direct(engineVoice, text, coding)]);
        return { voice, api, ref };
      }),
    );
    for (const { voice, api, ref } of measured) expect(Math.abs(api - ref) / ref, voice).toBeLessThan(0.05);
    // Unconverted UTF-8 bytes make the Czech voice spell out garbage: several times longer than the API's audio.
    const czech = cases[0]!;
    const wrong = await direct(czech[1], czech[4], null);
    expect(wrong).toBeGreaterThan(measured[0]!.api * 2);
  }, 120_000);

  it('wav output at 24 kHz decodes with ffprobe at the requested rate', async () => {
    const res = await tts({ ...base, language: 'fi', voice: 'Leena', audio_format: 'wav', sample_rate: 24000, text: 'Hyvää yötä.' });
    expect(res.status).toBe(200);
    const a = await probeAudio(Buffer.from(await res.arrayBuffer()), 'wav', 0);
    expect(a.sampleRate).toBe(24000);
    expect(a.seconds).toBeGreaterThan(0.5);
  });

  it('speed changes duration on diphone, HTS and cluster-unit voices alike', async () => {
    for (const [voice, language, text] of [
      ['Dita', 'cs', 'Dobrý den, jak se máte?'],
      ['Ona', 'ca', 'Bon dia, com estàs?'],
      ['Sarah', 'en', 'Hello there, how are you?'],
      ['Nikolai', 'ru', 'Здравствуйте, как дела?'],
    ] as const) {
      const [slow, fast] = await Promise.all([
        seconds({ ...base, voice, language, text, speed: 0.7 }),
        seconds({ ...base, voice, language, text, speed: 1.3 }),
      ]);
      expect(slow / fast, voice).toBeGreaterThan(1.4);
    }
  }, 90_000);

  it('a voice asked for a language it does not speak is refused before audio, naming the voices that do', async () => {
    for (const [voice, language] of [
      ['Dita', 'en'],
      ['Kal', 'cs'],
      ['Nikolai', 'fi'],
    ]) {
      const res = await tts({ ...base, voice, language, text: 'Hello.' });
      expect(res.status, `${voice}/${language}`).toBe(400);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body.error_type).toBe('invalid_request');
      expect(body.error_message).toMatch(new RegExp(`voice "${voice}".*not "${language}"`));
    }
    const msg = ((await (await tts({ ...base, voice: 'Kal', language: 'cs', text: 'Ahoj.' })).json()) as { error_message: string }).error_message;
    expect(msg).toMatch(/Dita, Kuba, Marek, Petr/);
    // A language festival has no voice for is a model-level refusal, as on the other models.
    const de = await tts({ ...base, voice: 'Kal', language: 'de', text: 'Hallo.' });
    expect(de.status).toBe(400);
    expect(((await de.json()) as { error_message: string }).error_message).toMatch(/not supported by model/);
  });

  it('text a voice cannot pronounce: refused before audio when it is all there is, silent between sentences it can', async () => {
    // Latin alone for the Hindi voice (festival would crash), Cyrillic alone for the Czech one (ISO-8859-2 has none).
    for (const [voice, language, text] of [
      ['Arjun', 'hi', 'Hello there.'],
      ['Ravi', 'te', 'abc'],
      ['Dita', 'cs', 'Привет мир.'],
    ]) {
      const res = await tts({ ...base, voice, language, text });
      expect(res.status, voice).toBe(400);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body.error_type).toBe('invalid_request');
      expect(body.error_message).toMatch(/nothing voice/);
    }
    const mixed = await seconds({ ...base, voice: 'Arjun', language: 'hi', text: 'Hello there. नमस्ते, आप कैसे हैं? — ... नमस्ते।' });
    const hindiOnly = await seconds({ ...base, voice: 'Arjun', language: 'hi', text: 'नमस्ते, आप कैसे हैं? नमस्ते।' });
    expect(Math.abs(mixed - hindiOnly)).toBeLessThan(0.3);
    expect(await seconds({ ...base, voice: 'Dita', language: 'cs', text: 'Dobrý den. Привет мир. Jak se máte?' })).toBeGreaterThan(1.5);
    // Over the WebSocket the unpronounceable chunk is silent and the stream ends normally.
    const c = await openTts(s.url);
    c.send({ api_key: s.apiKey, model: MODEL, voice: 'Ravi', language: 'te', audio_format: 'pcm_s16le', sample_rate: 16000, stream_id: 't' });
    c.send({ stream_id: 't', text: 'abc. ', text_end: false });
    c.send({ stream_id: 't', text: 'నమస్కారం, మీరు ఎలా ఉన్నారు?', text_end: true });
    await c.next((f) => f.stream_id === 't' && f.terminated === true, 30_000);
    expect(c.frames.some((f) => f.stream_id === 't' && f.error_type !== undefined)).toBe(false);
    expect(c.frames.some((f) => f.stream_id === 't' && f.audio_end === true)).toBe(true);
    expect((await probeAudio(streamAudio(c.frames, 't'), 'pcm_s16le', 16000)).seconds).toBeGreaterThan(1);
    c.close();
  }, 90_000);

  it('over the WebSocket: a mismatched voice ends that stream with invalid_request; a matching one speaks', async () => {
    const c = await openTts(s.url);
    const start = (id: string, voice: string, language: string) =>
      c.send({ api_key: s.apiKey, model: MODEL, voice, language, audio_format: 'pcm_s16le', sample_rate: 16000, stream_id: id });
    start('bad', 'Lucia', 'cs');
    const err = await c.next((f) => f.stream_id === 'bad' && f.error_type !== undefined);
    expect(err.error_type).toBe('invalid_request');
    await c.next((f) => f.stream_id === 'bad' && f.terminated === true);
    start('ok', 'Lucia', 'it');
    c.send({ stream_id: 'ok', text: 'Ciao a tutti, è un piacere.', text_end: true });
    await c.next((f) => f.stream_id === 'ok' && f.terminated === true, 30_000);
    expect(c.frames.some((f) => f.stream_id === 'ok' && f.audio_end === true)).toBe(true);
    expect((await probeAudio(streamAudio(c.frames, 'ok'), 'pcm_s16le', 16000)).seconds).toBeGreaterThan(1);
    c.close();
  });
});

/**
 * The server's descendant processes running `name` (festival's text2wave is a festival script). Children are started
 * through the server's spawner process, so they are its grandchildren.
 */
async function children(pid: number, name: RegExp): Promise<number[]> {
  const { stdout } = await execFileP('ps', ['-e', '-o', 'pid=,ppid=,args=']).catch(() => ({ stdout: '' }));
  const rows = stdout
    .split('\n')
    .map((l) => l.trim().match(/^(\d+)\s+(\d+)\s+(.*)$/))
    .filter((m): m is RegExpMatchArray => !!m)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3]! }));
  const tree = new Set([pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const r of rows)
      if (tree.has(r.ppid) && !tree.has(r.pid)) {
        tree.add(r.pid);
        grew = true;
      }
  }
  return rows.filter((r) => r.pid !== pid && tree.has(r.pid) && name.test(r.args)).map((r) => r.pid);
}

/** Kill -9 the first synthesizer child matching `name` that shows up. */
async function killChild(name: RegExp): Promise<number> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const [pid] = await children(s.pid, name);
    if (pid) {
      try {
        process.kill(pid, 'SIGKILL');
        return pid;
      } catch {
        // that segment's process had just finished: wait for the next one
      }
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no ${name} child of the server appeared`);
}

const LONG = Array.from({ length: 30 }, (_, i) => `This is sentence number ${i + 1} of a long text.`).join(' ');

describe('an engine failure after streaming began', () => {
  for (const format of ['pcm_s16le', 'mp3']) {
    it(`POST /tts (${format}): the response is cut off (no clean end); nothing is left running; the server keeps serving`, async () => {
      const res = await tts({ ...base, audio_format: format, text: LONG });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      const first = await reader.read();
      expect(first.done).toBe(false);
      let received = first.value!.length;
      await killChild(/text2wave/);
      // Reading on must fail: a truncated chunked body, not a clean end of a shorter response.
      const outcome = await (async () => {
        try {
          for (;;) {
            const r = await reader.read();
            if (r.done) return 'clean end';
            received += r.value.length;
          }
        } catch (err) {
          return `aborted: ${(err as Error).message}`;
        }
      })();
      expect(outcome).toMatch(/^aborted/);
      // Far less than the 30 sentences' audio (~75 s; 32 kB/s as PCM).
      expect(received).toBeLessThan(30 * 2 * 16000);
      // The encoder (mp3: an ffmpeg child) and the synthesis are gone with the request.
      await expect.poll(() => children(s.pid, /text2wave|ffmpeg/), { timeout: 5000 }).toEqual([]);
      const again = await tts({ ...base, text: 'Still here.' });
      expect(again.status).toBe(200);
      expect((await probeAudio(Buffer.from(await again.arrayBuffer()), 'pcm_s16le', 16000)).seconds).toBeGreaterThan(0.5);
    });
  }

  it('WebSocket: the stream gets an error frame then terminated; the other stream and the connection carry on', async () => {
    const c = await openTts(s.url);
    const start = (id: string, model: string, voice: string) =>
      c.send({ api_key: s.apiKey, model, voice, language: 'en', audio_format: 'pcm_s16le', sample_rate: 16000, stream_id: id });
    // The festival stream's synthesizer is killed; the espeak-ng stream beside it must not notice.
    start('fest', MODEL, 'Kal');
    start('other', 'parlance-tts-espeak-v1', 'Adrian');
    c.send({ stream_id: 'fest', text: LONG, text_end: true });
    c.send({ stream_id: 'other', text: LONG.slice(0, 400), text_end: true });
    await c.next((f) => f.stream_id === 'fest' && typeof f.audio === 'string', 30_000);
    await killChild(/text2wave/);
    const err = await c.next((f) => f.stream_id === 'fest' && f.error_type !== undefined, 30_000);
    expect(err.error_type).toBe('internal_error');
    expect(err.error_code).toBe(500);
    await c.next((f) => f.stream_id === 'fest' && f.terminated === true);
    const fest = c.frames.filter((f) => f.stream_id === 'fest');
    expect(fest.some((f) => f.audio_end === true)).toBe(false);
    expect(fest[fest.length - 1]).toEqual({ stream_id: 'fest', terminated: true });

    await c.next((f) => f.stream_id === 'other' && f.terminated === true, 60_000);
    expect(c.frames.some((f) => f.stream_id === 'other' && f.audio_end === true)).toBe(true);
    expect(c.frames.some((f) => f.stream_id === 'other' && f.error_type !== undefined)).toBe(false);
    expect((await probeAudio(streamAudio(c.frames, 'other'), 'pcm_s16le', 16000)).seconds).toBeGreaterThan(10);

    // The same connection runs a new festival stream to its end.
    start('after', MODEL, 'Kal');
    c.send({ stream_id: 'after', text: 'Back to normal.', text_end: true });
    await c.next((f) => f.stream_id === 'after' && f.terminated === true, 30_000);
    expect(c.frames.some((f) => f.stream_id === 'after' && f.audio_end === true)).toBe(true);
    expect(c.ws.readyState).toBe(c.ws.OPEN);
    c.close();
  }, 180_000);
});
