// `npm run bench -- <suite> [--quick]`: build dist/, run one benchmark suite against real server
// processes, print a results table and write bench/results/<suite>-<timestamp>.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildDist, Cleanup, formatTable, machineInfo, requireTools, ROOT, type Suite } from './lib.js';

const suites: Record<string, { about: string; options?: string[]; load: () => Promise<Suite> }> = {
  diarization: {
    about:
      'speaker diarization: DER for 2, 3, 4 speakers (real recordings and flite voices), offline and online, tuning and held-out halves, RTF. --speakers=exact: each conversation again with its true speaker count as the hint, DER without → with it',
    options: ['speakers'],
    load: async () => (await import('./diarization.js')).run,
  },
  http: { about: 'files API: count req/s, listing 1,000 files, 1 GiB streaming upload', load: async () => (await import('./http.js')).run },
  live: {
    about:
      'the live path through the server for every installed model, as a voice agent drives it: held-out real recordings as one conversation at real-time pace with a finalize after each clip, 1 and 4 streams (--streams=1,4,16; --models=neural or pocketsphinx for one): final-token WER vs async, first token, non-final lag, finalize → final, final lag, streams kept up. --formats=pcm,wav,mp3,ogg-opus,webm-opus,flac: the conversation in each container sent with audio_format auto at real-time pace, 1 stream each: non-final lag p50/p90/p95, first token, final WER. --set=tune: the tuning half’s recordings instead of the held-out ones (to choose settings on). --endpoints: 1 stream per model with endpoint detection on and no finalize: <end> after each clip, final WER and lag',
    options: ['streams', 'models', 'formats', 'set', 'endpoints'],
    load: async () => (await import('./live.js')).run,
  },
  'live-decoder': {
    about:
      "engine-only, in process: the live suite's conversation through one pocketsphinx live session as fast as it goes, every second pass waited for: final-token word errors and CPU and final words out before their clip's finalize, per decoding profile (streaming settings, how much of a session the second pass covers, how far behind the audio words settle, narrowband adaptation); the tuning half (--set=held-out for the other); --only=TEXT: the profiles whose name contains TEXT",
    options: ['set', 'only'],
    load: async () => (await import('./live-decoder.js')).run,
  },
  'live-settle': {
    about:
      "engine-only, in process: the live suite's conversation through the streaming model's session code, final WER per settling distance (--settle=2000,600; --set=tune), against the whole-clip decode (needs the real neural model)",
    options: ['settle', 'set'],
    load: async () => (await import('./live-settle.js')).run,
  },
  'live-start': {
    about:
      "speech from a session's first sample vs after 1 s of noise floor (issue 33, item 3): each real recording of the half (held-out; --set=tune) cut to its onset and streamed alone through the server at real-time pace in both ways: final WER, first word right, errors on the first two words",
    options: ['set'],
    load: async () => (await import('./live-start.js')).run,
  },
  load: {
    about:
      'mixed load (uploads, transcriptions, TTS, list calls, /health, 3 live streams) on a fixed schedule: p50/p99 per endpoint, 429s, timeouts, live-stream lag, event-loop delay, server CPU. --flood=<factor>: uploads, transcriptions and TTS at that many times their rate (refusals expected)',
    options: ['flood'],
    load: async () => (await import('./load.js')).run,
  },
  speakers: {
    about:
      'enrolled speakers: identification accuracy (correct / wrong / unknown name) and false-accept rate on multi-speaker recordings of real voices, by enrolment length and threshold, offline and online',
    load: async () => (await import('./speakers.js')).run,
  },
  realtime: {
    about:
      'real-time STT WebSocket: first-token and finalization latency, token lag per audio format, cold start, concurrent streams and finalization with the second pass off/on, memory per stream, live WER',
    load: async () => (await import('./realtime.js')).run,
  },
  terms: {
    about:
      'term recall of the real neural streaming model through the server, files and sessions, with and without context terms (its hotwords), per half of the real-speech set',
    load: async () => (await import('./terms.js')).run,
  },
  stt: {
    about: 'async transcription: WER (real vs synthetic), RTF with 1 and 2 workers, server overhead, head of line',
    load: async () => (await import('./stt.js')).run,
  },
  voices: {
    about: 'cloned voices: distance to the human reference speaker, cloned vs random built-in voice (features and pitch), preparation time',
    load: async () => (await import('./voices.js')).run,
  },
  wyoming: {
    about:
      'Wyoming transcription as Home Assistant drives it: each real recording of the half (held-out; --set=tune) as one utterance at real-time pace, audio-stop after its last sample: transcript WER vs async on the same clips, audio-stop → transcript wait, utterances with words before audio-stop; the default model for en and the real streaming model (--models=default for the first only)',
    options: ['set', 'models'],
    load: async () => (await import('./wyoming.js')).run,
  },
  wer: {
    about:
      "word error rate on real recordings (pocketsphinx-testdata, Asterisk prompts), raw and formatted, per file and total; term recall with and without context. --dir=<folder with refs.tsv> scores your own recordings; --tune sweeps decoder settings on the tuning half and reports them on the held-out half; --second-pass compares live second passes' decoder profiles on the tuning half (WER, CPU)",
    options: ['dir', 'tune', 'second-pass'],
    load: async () => (await import('./wer.js')).run,
  },
  workers: {
    about: 'async throughput with 1 and 2 worker processes (`--role worker`, PostgreSQL + pg-boss): jobs/min, audio s per s',
    load: async () => (await import('./workers.js')).run,
  },
  tts: {
    about: 'text-to-speech: first-byte latency over HTTP and WebSocket, RTF per engine/voice, simultaneous streams',
    load: async () => (await import('./tts.js')).run,
  },
  'tts-words': {
    about:
      'TTS word timestamps (POST /tts/with-timestamps) of every English espeak-ng, flite and festival voice against forced alignment of the audio by the built-in recognizer: median |error| of word starts and ends per engine (target ≤ 80 ms). --sherpa=<model id>,<voice>: a sherpa-onnx voice too',
    options: ['sherpa'],
    load: async () => (await import('./tts-words.js')).run,
  },
};

function usage(): string {
  const names = Object.entries(suites).map(([name, s]) => `  ${name.padEnd(10)} ${s.about}`);
  return ['usage: npm run bench -- <suite> [--quick]', '', 'suites:', ...names, '', '--quick  short smoke run (smaller sizes, shorter loads)'].join('\n');
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const flags = new Set(args.filter((a) => a.startsWith('-')));
  const positional = args.filter((a) => !a.startsWith('-'));
  const name = positional[0];
  // Suite options (`--dir=…`, `--tune`) are named in the suite's line of usage(); the suite reads them.
  const suiteArgs: Record<string, string> = {};
  for (const f of flags) {
    const m = /^--([a-z][a-z-]*)(?:=(.*))?$/.exec(f);
    if (m && m[1] !== 'quick') suiteArgs[m[1]!] = m[2] ?? '';
  }
  const known = new Set(['quick', ...(name ? (suites[name]?.options ?? []) : [])]);
  const unknownFlags = [...flags].filter((f) => !known.has(/^--([a-z-]+)/.exec(f)?.[1] ?? f));
  if (!name || positional.length > 1 || unknownFlags.length || !Object.hasOwn(suites, name)) {
    if (name && !Object.hasOwn(suites, name)) console.error(`unknown suite "${name}"\n`);
    if (unknownFlags.length) console.error(`unknown option ${unknownFlags.join(' ')}\n`);
    console.error(usage());
    return 2;
  }
  const quick = flags.has('--quick');

  const cleanup = new Cleanup();
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\n${signal}: cleaning up`);
    void cleanup.run().finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const startedAt = new Date();
  const log = (m: string) => console.error(`[bench ${name}] ${m}`);
  try {
    log('building dist/ (tsc -p tsconfig.build.json)');
    buildDist();
    requireTools(['ffmpeg', 'ffprobe']);
    const machine = machineInfo();
    const suite = await suites[name]!.load();
    const { rows, raw } = await suite({ quick, args: suiteArgs, cleanup, log });
    const finishedAt = new Date();

    const dir = path.join(ROOT, 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${name}-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
    const report = { suite: name, quick, started_at: startedAt.toISOString(), finished_at: finishedAt.toISOString(), machine, results: rows, raw };
    writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);

    const m = machine as { cpu_model: string; cpu_count: number; total_memory_gib: number; node_version: string };
    console.log(
      `\n${name} benchmarks${quick ? ' (--quick: smoke run, not comparable)' : ''} — ${m.cpu_model}, ${m.cpu_count} cores, ${m.total_memory_gib} GiB RAM, Node ${m.node_version}, ${startedAt.toISOString()}\n`,
    );
    console.log(formatTable(rows));
    const missed = rows.filter((r) => r.met === false).length;
    console.log(`\n${missed ? `${missed} target(s) not met` : 'all targets met'}; raw results: ${path.relative(ROOT, file)}`);
    return 0;
  } finally {
    await cleanup.run();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exit(1);
  },
);
