// Run one synthesizer CLI that writes a WAV to stdout; return its PCM. The child is killed on abort.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { INTERACTIVE_NICE } from '../../lib/priority.js';
import { spawnChild } from '../../lib/spawner/spawn-child.js';
import { WorkGate } from '../../lib/work-gate.js';

/**
 * Every synthesizer process of this node passes this gate: one per core by default (PARLANCE_TTS_PROCESSES), the
 * rest wait their turn. Its queue length is what TTS admission refuses new requests on.
 */
export const synthesisGate = new WorkGate(availableParallelism());

/** Argument replaced by a temporary WAV path: some CLIs cannot write to /dev/stdout when it is a socket. */
export const OUT_FILE = '{out}';

export class SynthesisError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SynthesisError';
  }
}

/** Parse a (possibly streamed, size-less) RIFF/WAVE: sample rate and the PCM after the data chunk header. */
export function parseWav(buf: Buffer): { sampleRate: number; pcm: Buffer } {
  if (buf.length < 12 || buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE')
    throw new SynthesisError('synthesizer output is not a WAV file');
  let off = 12;
  let sampleRate = 0;
  while (off + 8 <= buf.length) {
    const id = buf.toString('ascii', off, off + 4);
    const size = buf.readUInt32LE(off + 4);
    if (id === 'fmt ') {
      sampleRate = buf.readUInt32LE(off + 12);
      off += 8 + size + (size & 1);
      continue;
    }
    if (id === 'data') {
      // Streamed WAVs carry a placeholder size; everything after the header is audio.
      let pcm = buf.subarray(off + 8);
      if (pcm.length & 1) pcm = pcm.subarray(0, pcm.length - 1);
      return { sampleRate, pcm };
    }
    off += 8 + size + (size & 1);
  }
  throw new SynthesisError('synthesizer output has no data chunk');
}

/** A synthesizer's audio; `stdout` is what it printed when it wrote the audio to a file (OUT_FILE). */
export interface WavOutput {
  sampleRate: number;
  pcm: Buffer;
  stdout?: Buffer;
}

export function runWavProcess(cmd: string, args: string[], opts: { stdin?: string | Buffer; signal?: AbortSignal; emptyOk?: boolean }): Promise<WavOutput> {
  return synthesisGate.run(() => runNow(cmd, args, opts), opts.signal);
}

async function runNow(cmd: string, args: string[], opts: { stdin?: string | Buffer; signal?: AbortSignal; emptyOk?: boolean }): Promise<WavOutput> {
  opts.signal?.throwIfAborted();
  const outFile = args.includes(OUT_FILE) ? path.join(tmpdir(), `parlance-tts-${randomBytes(8).toString('hex')}.wav`) : undefined;
  if (outFile) args = args.map((a) => (a === OUT_FILE ? outFile : a));
  // Below the event loop and live transcription (lib/priority.ts).
  const child = spawnChild(cmd, args, { stdio: [opts.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'], nice: INTERACTIVE_NICE });
  const out: Buffer[] = [];
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => out.push(d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    if (stderr.length < 4096) stderr += d;
  });
  const onAbort = () => child.kill('SIGKILL');
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (opts.stdin !== undefined) {
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(opts.stdin);
  }
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', (err) => reject(new SynthesisError(`cannot run ${cmd}: ${err.message}`)));
      child.once('close', (c) => resolve(c));
    });
    opts.signal?.throwIfAborted();
    if (code !== 0) throw new SynthesisError(`${cmd} exited with ${code}: ${stderr.trim().split('\n')[0] ?? ''}`);
    const wav = outFile ? await readFile(outFile) : Buffer.concat(out);
    const stdout = outFile ? { stdout: Buffer.concat(out) } : {};
    // Festival writes nothing, successfully, for an utterance without a single word it could say.
    if (wav.length === 0 && opts.emptyOk) return { sampleRate: 0, pcm: wav, ...stdout };
    return { ...parseWav(wav), ...stdout };
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    if (outFile) await rm(outFile, { force: true });
  }
}

/** Whether `cmd` runs (exit status ignored). */
export function commandExists(cmd: string, args: string[] = ['--help']): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('close', () => resolve(true));
  });
}
