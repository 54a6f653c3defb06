// Decoder worker thread: owns one pocketsphinx decoder, so the blocking native calls never run on the main event
// loop. A batch worker decodes one segment per 'decode' message (the pool decides whose segment comes next); a
// streaming worker runs one live session at a time (stream-session.ts), on the audio the speech gate hands it. Started by decoder-worker.ts (as
// worker.js from dist/, or worker.ts through tsx when the sources run directly, e.g. under vitest). Speaks only the
// messages in messages.ts.
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { lowerThreadPriority } from '../../../lib/priority.js';
import { peakDb, SILENCE_PEAK_DB } from '../utterances.js';
import { loadAddon, type NativeDecoder } from './addon.js';
import type { Token } from '../interface.js';
import type { DecoderBias, FromWorker, ToWorker, WorkerInit } from './messages.js';
import { transformFor } from './narrowband.js';
import { concatSamples, fromStart, primerFor } from './primer.js';
import { StreamSession } from './stream-session.js';
import { segmentsToTokens } from './tokens.js';

const SAMPLES_PER_MS = 16;

const port = parentPort;
if (!port) throw new Error('pocketsphinx worker must run in a worker thread');
const init = workerData as WorkerInit;
if (init.nice) lowerThreadPriority(init.nice);

function send(msg: FromWorker): void {
  port!.postMessage(msg);
}

/**
 * Biased searches a batch decoder keeps: two requests with context taking turns on it keep theirs (a third rebuilds,
 * ~0.3 s). A streaming decoder serves one session and drops its search when the session ends.
 */
const BATCH_BIAS_SEARCHES = 2;

/** Decode with this bias (or none) from now on. */
function useBias(decoder: NativeDecoder, bias: DecoderBias | undefined, keep: number): void {
  if (!bias) {
    if (decoder.biasKey() !== null) decoder.setBias(null);
    return;
  }
  if (decoder.biasKey() === bias.key) return;
  // pocketsphinx reads language models from files only; this one is read at once and removed.
  const file = join(tmpdir(), `parlance-bias-${process.pid}-${bias.key}.arpa`);
  writeFileSync(file, bias.arpa);
  try {
    decoder.setBias({ key: bias.key, words: bias.words, lm: file, weight: bias.weight, keep });
  } finally {
    rmSync(file, { force: true });
  }
}

/**
 * Decode one batch segment as a whole utterance, from the state of a fresh decoder: segments of different requests
 * can then be interleaved on one decoder without changing anybody's result. Two things carry over between utterances
 * of one pocketsphinx decoder: the front end's noise-removal statistics (reset by startStream) and the live cepstral
 * mean (reset by resetCmn; a `fullUtt` decode computes the mean over the segment itself anyway, the model's
 * `-cmn batch`).
 */
function decodeSegment(decoder: NativeDecoder, startSample: number, samples: Int16Array): Token[] {
  if (peakDb(samples) < SILENCE_PEAK_DB) return []; // nothing to hear; the decoder would invent a word
  if (init.narrowband) decoder.setMllr(transformFor(samples, init.narrowband));
  decoder.startStream();
  decoder.resetCmn();
  decoder.startUtt();
  const primer = primerFor(startSample, samples);
  decoder.processRaw(concatSamples(primer, samples), { fullUtt: true });
  decoder.endUtt();
  // Segments start on the VAD's 32 ms grid, so times are whole milliseconds; the end of the input may not be.
  const tokens = segmentsToTokens(
    decoder.segments(),
    (startSample - primer.length) / SAMPLES_PER_MS,
    Math.floor((startSample + samples.length) / SAMPLES_PER_MS),
  );
  return fromStart(tokens, startSample / SAMPLES_PER_MS);
}

function createDecoder(): NativeDecoder | undefined {
  try {
    const started = performance.now();
    const addon = loadAddon(init.addonPath);
    const created = new addon.Decoder({ ...init.model, args: init.decoderArgs });
    send({ type: 'ready', loadMs: Math.round(performance.now() - started) });
    return created;
  } catch (err) {
    // No message listener is installed after this, so the thread ends by itself; the pool terminates it anyway.
    send({ type: 'init_error', message: err instanceof Error ? err.message : String(err) });
    return undefined;
  }
}

const decoder = createDecoder();
if (decoder) port.on('message', onMessage);

let current: StreamSession | undefined;

function fail(session: StreamSession, err: unknown): void {
  try {
    session.cancel();
  } catch {
    // The decoder reported the error already; leave it to the next startUtt.
  }
  current = undefined;
  send({ type: 'error', session: session.id, message: err instanceof Error ? err.message : String(err) });
}

function onMessage(msg: ToWorker): void {
  if (!decoder) return;
  if (msg.type === 'decode') {
    if (current) fail(current, new Error('session replaced by a batch segment'));
    const started = performance.now();
    try {
      useBias(decoder, msg.bias, BATCH_BIAS_SEARCHES);
      const tokens = decodeSegment(decoder, msg.startSample, new Int16Array(msg.pcm));
      send({ type: 'decoded', job: msg.job, tokens, decodeMs: performance.now() - started });
    } catch (err) {
      send({ type: 'decode_error', job: msg.job, message: err instanceof Error ? err.message : String(err) });
    }
    return;
  }
  if (msg.type === 'begin') {
    if (current) fail(current, new Error('session replaced'));
    try {
      useBias(decoder, msg.stream.bias, 1);
      current = new StreamSession(msg.session, decoder, msg.stream, init.narrowband, send);
    } catch (err) {
      send({ type: 'error', session: msg.session, message: err instanceof Error ? err.message : String(err) });
    }
    return;
  }
  const session = current;
  if (!session || session.id !== msg.session) {
    // A message for a session that already failed or ended: answer control messages so nobody waits forever.
    if (msg.type === 'end' || msg.type === 'cancel') send({ type: 'ended', session: msg.session });
    return;
  }
  try {
    switch (msg.type) {
      case 'audio':
        session.audio(msg.startSample, new Int16Array(msg.pcm));
        send({ type: 'ack', session: session.id, seq: msg.seq });
        break;
      case 'endpoint':
        session.endpoint(msg.sample, msg.reason);
        break;
      case 'finalize':
        session.finalize();
        send({ type: 'finalized', session: session.id });
        break;
      case 'end':
        session.end();
        current = undefined;
        decoder.dropBias();
        send({ type: 'ended', session: session.id });
        break;
      case 'cancel':
        session.cancel();
        current = undefined;
        decoder.dropBias();
        send({ type: 'ended', session: session.id });
        break;
    }
  } catch (err) {
    fail(session, err);
  }
}
