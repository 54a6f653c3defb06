// The examples of README.md and docs/guide/*.md run against a live server, as a reader would run them: every `sh`
// block in bash (`-e`, `-o pipefail`), every `js` block as an .mjs file under node, every `ts` block as an .mts file
// under tsx, each in a fresh directory holding a real English recording as `speech.wav` (Debian's
// pocketsphinx-testdata), with `PARLANCE_KEY` set to a key of the server and `PARLANCE_DATA_DIR` to its data
// directory. The pages write the default address, 127.0.0.1:8080; the test puts its server's address in its place.
// The server runs in the soniox-sdk compatibility profile, which the README's SDK example says to start it with.
//
// A block that cannot run here says `no-test` after its language (it installs packages, starts a server, downloads
// a model, or needs several machines): the test lists those. Blocks of other languages (`text`, `json`) are output
// and data, not run; a block without a language fails the test. The directories sit under build/ so that `npx
// parlance` and the packages the examples import resolve from the checkout; npm runs offline (nothing is fetched).
// curl reads a .curlrc that turns HTTP errors into a failed command, so a block that gets a 4xx or 5xx fails.
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, startParlance, type Parlance } from '../harness.js';
import { fencedBlocks, type FencedBlock } from '../markdown.js';
import { TESTDATA } from '../real-speech.js';

const SPEECH = path.join(TESTDATA, 'librivox', 'sense_and_sensibility_01_austen_64kb-0870.wav');
const BLOCK_TIMEOUT_MS = 120_000;
const RUNNERS: Record<string, { file: string; command: (file: string) => [string, string[]] }> = {
  sh: { file: 'block.sh', command: (f) => ['bash', ['-e', '-o', 'pipefail', f]] },
  js: { file: 'block.mjs', command: (f) => [process.execPath, [f]] },
  ts: { file: 'block.mts', command: (f) => [process.execPath, ['--import', 'tsx', f]] },
};
const LANGS: Record<string, keyof typeof RUNNERS> = {
  sh: 'sh',
  bash: 'sh',
  shell: 'sh',
  js: 'js',
  mjs: 'js',
  javascript: 'js',
  ts: 'ts',
  mts: 'ts',
  typescript: 'ts',
};

interface DocBlock extends FencedBlock {
  file: string;
}

const pages = ['README.md', ...readdirSync(path.join(ROOT, 'docs', 'guide')).map((f) => `docs/guide/${f}`)].filter((f) => f.endsWith('.md')).sort();
const blocks: DocBlock[] = pages.flatMap((file) => fencedBlocks(readFileSync(path.join(ROOT, file), 'utf8')).map((b) => ({ ...b, file })));
const runnable = blocks.filter((b) => LANGS[b.lang] && !b.flags.includes('no-test'));
const marked = blocks.filter((b) => b.flags.includes('no-test'));
const where = (b: DocBlock): string => `${b.file}:${b.line} ${b.lang}`;

let s: Parlance;
let work: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  s = await startParlance({ env: { PARLANCE_COMPAT: 'soniox-sdk' } });
  mkdirSync(path.join(ROOT, 'build'), { recursive: true });
  work = mkdtempSync(path.join(ROOT, 'build', 'docs-blocks-'));
  writeFileSync(path.join(work, '.curlrc'), 'fail-with-body\nshow-error\n');
  env = {
    ...process.env,
    PARLANCE_KEY: s.apiKey,
    PARLANCE_DATA_DIR: s.dataDir,
    CURL_HOME: work,
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
  };
});
afterAll(async () => {
  await s?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Run one block in a directory of its own; resolves with its exit code and output. */
function run(block: DocBlock, index: number): Promise<{ code: number | null; out: string }> {
  const runner = RUNNERS[LANGS[block.lang]!]!;
  const dir = path.join(work, `${index}-${path.basename(block.file, '.md')}-${block.line}`);
  mkdirSync(dir);
  copyFileSync(SPEECH, path.join(dir, 'speech.wav'));
  const { host } = new URL(s.url);
  writeFileSync(path.join(dir, runner.file), block.body.replaceAll('127.0.0.1:8080', host).replaceAll('localhost:8080', host));
  const [cmd, args] = runner.command(runner.file);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: dir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    const timer = setTimeout(() => {
      out += `\n(killed after ${BLOCK_TIMEOUT_MS / 1000} s)`;
      process.kill(-child.pid!, 'SIGKILL');
    }, BLOCK_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

describe('code blocks of the README and the guide', () => {
  it('every block names its language, and no-test marks only blocks of a runnable language', () => {
    expect(blocks.filter((b) => b.lang === '').map(where)).toEqual([]);
    expect(marked.filter((b) => !LANGS[b.lang]).map(where)).toEqual([]);
    expect(runnable.length).toBeGreaterThan(10);
    console.log(`${runnable.length} blocks run; ${marked.length} marked no-test:\n${marked.map((b) => `  ${where(b)}`).join('\n')}`);
  });

  it('a block whose request the server refuses fails', async () => {
    const unauthenticated = { file: 'self-check.md', line: 1, end: 3, lang: 'sh', flags: [], body: 'curl -s http://127.0.0.1:8080/v1/files' };
    const { code, out } = await run(unauthenticated, -1);
    expect(code).not.toBe(0);
    expect(out).toContain('unauthenticated');
  });

  runnable.forEach((block, i) => {
    it(
      `${where(block)} runs against a live server`,
      async () => {
        const { code, out } = await run(block, i);
        expect(code, `${where(block)} exited ${code}:\n${out}`).toBe(0);
      },
      BLOCK_TIMEOUT_MS + 10_000,
    );
  });
});
