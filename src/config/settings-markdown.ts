// The settings table of docs/guide/configuration.md in Markdown, from the setting definitions (`make settings-table` writes it there).
import type { SettingDef } from './setting-definition.js';
import { settingDefs } from './setting-defs.js';

/** Markdown rows for the settings table of docs/guide/configuration.md. */
export function settingsMarkdownTable(): string {
  const rows = ['| Environment variable | Config key | Default | Meaning |', '|---|---|---|---|'];
  for (const [key, def] of Object.entries(settingDefs) as [string, SettingDef][]) {
    const d = Array.isArray(def.default) ? def.default.join(',') : String(def.default);
    rows.push(`| \`${def.env}\` | \`${key}\` | ${d === '' ? '(empty)' : `\`${d}\``} | ${def.doc} |`);
  }
  return rows.join('\n');
}
