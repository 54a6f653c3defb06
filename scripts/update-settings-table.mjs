// Regenerate the settings table of docs/guide/configuration.md from src/config/settings.ts (settingsMarkdownTable()).
// The table sits between the markers below; src/config/settings.test.ts fails when it is stale.
// Usage: node --import tsx scripts/update-settings-table.mjs [--check]   (or `make settings-table`)
//   --check  change nothing; exit 1 when the page's table differs from the generated one.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { settingsMarkdownTable } from '../src/config/settings.ts';

const START = '<!-- settings:start -->';
const END = '<!-- settings:end -->';

const pageName = 'docs/guide/configuration.md';
const pagePath = path.resolve(import.meta.dirname, '..', pageName);
const page = readFileSync(pagePath, 'utf8');
const start = page.indexOf(START);
const end = page.indexOf(END);
if (start < 0 || end < start || page.indexOf(START, start + 1) >= 0) {
  console.error(`${pageName} must contain exactly one "${START}" followed by "${END}"`);
  process.exit(1);
}

const updated = `${page.slice(0, start)}${START}\n${settingsMarkdownTable()}\n${page.slice(end)}`;
if (process.argv.includes('--check')) {
  if (updated !== page) {
    console.error(`${pageName}: the settings table is stale: run \`make settings-table\``);
    process.exit(1);
  }
  console.log(`${pageName}: the settings table is up to date`);
} else if (updated === page) {
  console.log(`${pageName}: the settings table is up to date`);
} else {
  writeFileSync(pagePath, updated);
  console.log(`${pageName}: the settings table regenerated`);
}
