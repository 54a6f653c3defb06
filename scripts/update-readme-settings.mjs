// Regenerate README.md's settings table from src/config/settings.ts (settingsMarkdownTable()). The table
// sits between the markers below; src/config/settings.test.ts fails when it is stale.
// Usage: node --import tsx scripts/update-readme-settings.mjs [--check]   (or `make readme`)
//   --check  change nothing; exit 1 when the README's table differs from the generated one.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { settingsMarkdownTable } from '../src/config/settings.ts';

const START = '<!-- settings:start -->';
const END = '<!-- settings:end -->';

const readmePath = path.resolve(import.meta.dirname, '..', 'README.md');
const readme = readFileSync(readmePath, 'utf8');
const start = readme.indexOf(START);
const end = readme.indexOf(END);
if (start < 0 || end < start || readme.indexOf(START, start + 1) >= 0) {
  console.error(`README.md must contain exactly one "${START}" followed by "${END}"`);
  process.exit(1);
}

const updated = `${readme.slice(0, start)}${START}\n${settingsMarkdownTable()}\n${readme.slice(end)}`;
if (process.argv.includes('--check')) {
  if (updated !== readme) {
    console.error('README.md settings table is stale: run `make readme`');
    process.exit(1);
  }
  console.log('README.md settings table is up to date');
} else if (updated === readme) {
  console.log('README.md settings table is up to date');
} else {
  writeFileSync(readmePath, updated);
  console.log('README.md settings table regenerated');
}
