// OpenAI's `keywords` end to end (issue 36): words or phrases to expect, in the transcription form (`keywords[]`,
// sent by the official `openai` SDK) and in a Realtime session's transcription (GA `audio.input.transcription` and
// beta `input_audio_transcription`), become the transcription's context terms. A real recording (Asterisk's
// "You are now unmuted.", read by Allison Smith): "unmuted" is not in the model's dictionary, so it is only ever
// recognised when named. Limits and wrong types are refused naming the field.
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync } from 'node:fs';
import OpenAI, { BadRequestError } from 'openai';
import type { TranscriptionCreateParamsNonStreaming } from 'openai/resources/audio/transcriptions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_KEYWORD_CHARS, MAX_KEYWORDS } from '../../src/modules/openai/schemas.js';
import { type Parlance, startParlance } from '../harness.js';
import { ASTERISK_EN } from '../real-speech.js';
import { appendAll, type Conn, errorOf, sdkSession } from './openai-helpers.js';

const UNMUTED = `${ASTERISK_EN}/conf-unmuted.wav`; // "You are now unmuted."
let s: Parlance;
let client: OpenAI;

beforeAll(async () => {
  // Final words always come from the second pass: words are checked, not a loaded machine's timing.
  s = await startParlance({ env: { PARLANCE_REALTIME_SECOND_PASS_WAIT_MS: '60000' } });
  client = new OpenAI({ apiKey: s.apiKey, baseURL: `${s.url}/v1`, maxRetries: 0, timeout: 420_000 });
}, 60_000);
afterAll(() => s?.stop());

/** The SDK's transcription call with fields its types may not know yet (`keywords` came with openai-node 7.1). */
function transcribe(fields: Record<string, unknown>) {
  return client.audio.transcriptions
    .create({ file: createReadStream(UNMUTED), model: 'whisper-1', ...fields } as TranscriptionCreateParamsNonStreaming)
    .withResponse();
}

async function badRequest(fields: Record<string, unknown>): Promise<BadRequestError> {
  const err = await transcribe(fields).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(BadRequestError);
  return err as BadRequestError;
}

describe.skipIf(!existsSync(UNMUTED))('keywords', () => {
  it('transcription form: keywords[] become context terms, with the prompt as its text; without them the word is not heard', async () => {
    const [plain, keywords, both] = await Promise.all([
      transcribe({}),
      transcribe({ keywords: ['unmuted', 'Kubernetes'] }),
      transcribe({ prompt: 'Conference bridge prompts.', keywords: ['unmuted'], response_format: 'verbose_json' }),
    ]);
    expect(plain.data.text).not.toMatch(/unmuted/i);
    expect(keywords.data.text).toMatch(/\bunmuted\b/);
    expect(keywords.data.text).not.toMatch(/kubernetes/i);
    expect(both.data.text).toMatch(/\bunmuted\b/);
    // The native transcription each request made: the keywords are its context's terms.
    const context = async (r: typeof plain) =>
      ((await (await s.request(`/v1/transcriptions/${r.response.headers.get('x-parlance-transcription-id')}`)).json()) as { context: unknown }).context;
    expect(await context(plain)).toBeNull();
    expect(await context(keywords)).toEqual({ terms: ['unmuted', 'Kubernetes'] });
    expect(await context(both)).toEqual({ text: 'Conference bridge prompts.', terms: ['unmuted'] });
  }, 480_000);

  it('transcription form: too many keywords, a long one, or keywords and prompt over the context cap are refused naming keywords', async () => {
    const tooMany = await badRequest({ keywords: Array.from({ length: MAX_KEYWORDS + 1 }, (_, i) => `k${i}`) });
    expect(tooMany.param).toBe('keywords');
    expect(tooMany.message).toMatch(/keywords: must NOT have more than 500 items/);
    expect((await badRequest({ keywords: ['k'.repeat(MAX_KEYWORD_CHARS + 1)] })).param).toBe('keywords');
    const over = await badRequest({
      prompt: 'p'.repeat(9_000),
      keywords: ['k'.repeat(200), 'k'.repeat(200), 'k'.repeat(200), 'k'.repeat(200), 'k'.repeat(201)],
    });
    expect([over.param, over.message]).toEqual([
      'keywords',
      '400 Invalid request: keywords: with the prompt must be at most 10000 characters together; got 10001',
    ]);
    // A hundred unknown fields are still too many (list entries are what the form makes room for).
    const unknown = await badRequest(Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`f${i}`, 'x'])));
    expect(unknown.message).toMatch(/Too many multipart fields/);
    expect(((await (await s.request('/v1/files/count')).json()) as { total: number }).total).toBe(0);
  }, 120_000);

  describe('Realtime sessions', () => {
    /** The recording as 24 kHz pcm16, with 1.5 s of silence for the turn to end. */
    let audio: Buffer;
    beforeAll(() => {
      const pcm = execFileSync('ffmpeg', ['-v', 'error', '-i', UNMUTED, '-f', 's16le', '-ar', '24000', '-ac', '1', '-']);
      audio = Buffer.concat([pcm, Buffer.alloc(48 * 1500)]);
    });

    /** One turn of the recording; the first completed transcript. */
    async function turn(c: Conn, update: Record<string, unknown>, updated: string): Promise<string> {
      c.send(update);
      await c.until((e) => e.type === updated);
      appendAll(c, audio);
      const done = await c.until((e) => e.type === 'conversation.item.input_audio_transcription.completed', 180_000);
      return done.transcript as string;
    }

    it('GA audio.input.transcription.keywords and beta input_audio_transcription.keywords: context terms of the session', async () => {
      const [ga, plain, beta] = await Promise.all([sdkSession(s, s.apiKey), sdkSession(s, s.apiKey), sdkSession(s, s.apiKey, { beta: true })]);
      const gaUpdate = (keywords?: string[]) => ({
        type: 'session.update',
        session: { type: 'transcription', audio: { input: { transcription: { model: 'gpt-4o-transcribe', ...(keywords ? { keywords } : {}) } } } },
      });
      const [withKeywords, without, withBeta] = await Promise.all([
        turn(ga, gaUpdate(['unmuted']), 'session.updated'),
        turn(plain, gaUpdate(), 'session.updated'),
        turn(
          beta,
          { type: 'transcription_session.update', session: { input_audio_transcription: { keywords: ['unmuted'] } } },
          'transcription_session.updated',
        ),
      ]);
      expect(withKeywords).toMatch(/\bunmuted\b/i);
      expect(without).not.toMatch(/unmuted/i);
      expect(withBeta).toMatch(/\bunmuted\b/i);
      // Each update answered with the keywords in force.
      expect(ga.events.find((e) => e.type === 'session.updated')!.session).toMatchObject({ audio: { input: { transcription: { keywords: ['unmuted'] } } } });
      expect(
        (plain.events.find((e) => e.type === 'session.updated')!.session as { audio: { input: { transcription: object } } }).audio.input.transcription,
      ).not.toHaveProperty('keywords');
      expect(beta.events.find((e) => e.type === 'transcription_session.updated')!.session).toMatchObject({
        input_audio_transcription: { keywords: ['unmuted'] },
      });
      // Once the recognizer runs, the keywords are fixed: changing them is an error event, the session goes on.
      ga.send({ ...gaUpdate(['Kubernetes']), event_id: 'evt_k' });
      const refused = errorOf(await ga.until((e) => e.type === 'error'));
      expect(refused).toMatchObject({ code: 'invalid_value', param: 'session.audio.input.transcription.keywords', event_id: 'evt_k' });
      expect(refused.message).toMatch(/cannot change once audio has been appended/);
      for (const c of [ga, plain, beta]) {
        c.close();
        await c.closed;
      }
      expect([ga.errors.length, plain.errors, beta.errors]).toEqual([1, [], []]);
    }, 300_000);

    it('keywords of the wrong type, over the caps, or over the context cap with the prompt: error events naming keywords', async () => {
      const c = await sdkSession(s, s.apiKey);
      await c.until((e) => e.type === 'session.created');
      const update = (transcription: Record<string, unknown>, event_id: string) =>
        c.send({ type: 'session.update', event_id, session: { type: 'transcription', audio: { input: { transcription } } } });
      update({ keywords: 'unmuted' }, 'e1');
      update({ keywords: Array<string>(MAX_KEYWORDS + 1).fill('k') }, 'e2');
      update({ prompt: 'p'.repeat(9_999), keywords: ['k', 'k'] }, 'e3');
      update({ keywords: Array<string>(41).fill('.'.repeat(200)) }, 'e4');
      const errors = await Promise.all(
        ['e1', 'e2', 'e3', 'e4'].map(async (id) => errorOf(await c.until((e) => e.type === 'error' && (e.error as { event_id: string }).event_id === id))),
      );
      for (const e of errors) expect(e).toMatchObject({ code: 'invalid_value', param: 'session.audio.input.transcription.keywords' });
      expect(errors[2]!.message).toBe('Invalid request: session.audio.input.transcription.keywords: with the prompt is over 10000 characters (10001)');
      expect(errors[3]!.message).toBe('Invalid request: session.audio.input.transcription.keywords: with the prompt is over 8000 tokens (about 8200)');
      // None of them changed the session.
      update({ language: 'en' }, 'e5');
      const updated = await c.until((e) => e.type === 'session.updated');
      expect((updated.session as { audio: { input: { transcription: object } } }).audio.input.transcription).not.toHaveProperty('keywords');
      c.close();
      await c.closed;
    }, 60_000);
  });
});
