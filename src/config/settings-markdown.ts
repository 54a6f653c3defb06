// README's settings table in Markdown, from the setting definitions (`make readme` writes it into README.md).
import type { SettingDef } from './setting-definition.js';
import { settingDefs } from './setting-defs.js';

/** Markdown rows for the README settings table. */
export function settingsMarkdownTable(): string {
  const rows = ['| Environment variable | Config key | Default | Meaning |', '|---|---|---|---|'];
  for (const [key, def] of Object.entries(settingDefs) as [string, SettingDef][]) {
    const d = Array.isArray(def.default) ? def.default.join(',') : String(def.default);
    rows.push(`| \`${def.env}\` | \`${key}\` | ${d === '' ? '(empty)' : `\`${d}\``} | ${def.doc} |`);
  }
  return rows.join('\n');
}
