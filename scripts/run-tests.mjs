// Run the whole vitest suite and close with one plain summary line that CI recognises:
//   tests: N passed, N failed, N skipped
// Vitest prints its own report (default reporter) and a JSON report to a temporary file; the summary and a
// list of the ten slowest tests (so creeping durations show before they cross a timeout) are computed from the JSON. The exit code is vitest's, and non-zero whenever anything failed.
// Before vitest it makes sure PostgreSQL and Redis answer (scripts/test-services.mjs: it uses the machine's when they
// listen, else starts private ones for the run) and stops what it started once vitest ends, interrupted or not.
// Usage: node scripts/run-tests.mjs [extra vitest arguments]
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestServices } from './test-services.mjs';

const root = path.resolve(import.meta.dirname, '..');
const vitest = path.join(root, 'node_modules', 'vitest', 'vitest.mjs');
if (!existsSync(vitest)) {
  console.error('run-tests: vitest is not installed; run `make setup` first');
  process.exit(1);
}

const tmp = mkdtempSync(path.join(tmpdir(), 'parlance-vitest-'));
const jsonFile = path.join(tmp, 'results.json');
const args = [vitest, 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${jsonFile}`, ...process.argv.slice(2)];

let child;
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, () => {
    interrupted = true;
    child?.kill(signal);
  });

let services;
try {
  services = await startTestServices({ root });
} catch (err) {
  rmSync(tmp, { recursive: true, force: true });
  console.error(`run-tests: the test services did not start: ${err.message}`);
  process.exit(1);
}
if (interrupted) {
  await services.stop();
  rmSync(tmp, { recursive: true, force: true });
  process.exit(130);
}

child = spawn(process.execPath, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...services.env } });
const code = await new Promise((resolve) => {
  child.on('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0)));
  child.on('error', (err) => {
    console.error(`run-tests: could not start vitest: ${err.message}`);
    resolve(1);
  });
});
await services.stop();

let report;
try {
  report = JSON.parse(readFileSync(jsonFile, 'utf8'));
} catch {
  report = undefined;
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

if (!report) {
  console.log(`run-tests: vitest wrote no JSON report (exit code ${code}); no test summary`);
  process.exit(code || 1);
}

const passed = report.numPassedTests ?? 0;
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
let failed = report.numFailedTests ?? 0;
// A test file that failed without a failing test (import error, failing beforeAll/afterAll hook) counts as
// one failure, so the summary never reads "0 failed" for a run that failed.
const brokenFiles = (report.testResults ?? []).filter((file) => file.status === 'failed' && !(file.assertionResults ?? []).some((t) => t.status === 'failed'));
for (const file of brokenFiles) console.log(`run-tests: ${path.relative(root, file.name)} failed outside its tests: ${(file.message ?? '').split('\n')[0]}`);
failed += brokenFiles.length;

printSlowest(report, 10);

const exitCode = code !== 0 ? code : failed > 0 || report.success === false ? 1 : 0;
if (exitCode !== 0 && failed === 0) console.log(`run-tests: vitest failed (exit code ${code}) although no test failed; see its output above`);
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(exitCode);

/** The `n` slowest tests of the run, slowest first, with their file. */
function printSlowest(report, n) {
  const tests = (report.testResults ?? []).flatMap((file) =>
    (file.assertionResults ?? [])
      .filter((t) => typeof t.duration === 'number')
      .map((t) => ({ ms: t.duration, file: path.relative(root, file.name), name: t.fullName ?? t.title, status: t.status })),
  );
  if (!tests.length) return;
  tests.sort((a, b) => b.ms - a.ms);
  console.log(`\nslowest ${Math.min(n, tests.length)} tests:`);
  for (const t of tests.slice(0, n)) {
    const flag = t.status === 'passed' ? '' : ` [${t.status}]`;
    console.log(`  ${(t.ms / 1000).toFixed(1).padStart(6)} s  ${t.file} > ${t.name}${flag}`);
  }
  console.log('');
}
