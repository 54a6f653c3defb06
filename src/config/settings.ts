// Resolving the settings: default < config file < environment < CLI flags, each value checked against its
// definition (setting-defs.ts).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../lib/config-error.js';
import type { SettingDef } from './setting-definition.js';
import { type RateCategory, type SettingKey, type Settings, settingDefs } from './setting-defs.js';

export { rateCategories, settingDefs, type RateCategory, type SettingKey, type Settings } from './setting-defs.js';
export { settingsMarkdownTable } from './settings-markdown.js';
export { ConfigError };

/** Requests per minute for a category and scope (0 = unlimited). */
export function rateLimitOf(settings: Settings, category: RateCategory, scope: 'organization' | 'project'): number {
  const key = `rate_${category}_${scope === 'project' ? 'project' : 'org'}`;
  return (settings as unknown as Record<string, number>)[key] ?? 0;
}

function parseValue(key: string, def: SettingDef, raw: unknown): unknown {
  const where = `${def.env} (${key})`;
  switch (def.kind) {
    case 'string':
      return String(raw);
    case 'enum': {
      const s = String(raw);
      if (!def.values!.includes(s)) throw new ConfigError(`${where} must be one of ${def.values!.join(', ')}; got "${s}"`);
      return s;
    }
    case 'int':
    case 'number': {
      const n = typeof raw === 'number' ? raw : Number(String(raw).trim());
      if (!Number.isFinite(n) || String(raw).trim() === '') throw new ConfigError(`${where} must be a number; got "${String(raw)}"`);
      if (def.kind === 'int' && !Number.isInteger(n)) throw new ConfigError(`${where} must be an integer; got "${String(raw)}"`);
      if (def.min !== undefined && n < def.min) throw new ConfigError(`${where} must be >= ${def.min}; got ${n}`);
      return n;
    }
    case 'bool': {
      if (typeof raw === 'boolean') return raw;
      const s = String(raw).trim().toLowerCase();
      if (['1', 'true', 'yes', 'on'].includes(s)) return true;
      if (['0', 'false', 'no', 'off', ''].includes(s)) return false;
      throw new ConfigError(`${where} must be a boolean; got "${String(raw)}"`);
    }
    case 'list':
      if (Array.isArray(raw)) return raw.map(String).filter(Boolean);
      return String(raw)
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
  }
}

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  configFile?: string;
  overrides?: Partial<Record<SettingKey, unknown>>;
}

/** Resolve every setting: default < config file < environment < overrides (CLI flags). */
export function loadSettings(opts: LoadOptions = {}): Settings {
  const env = opts.env ?? process.env;
  const file = opts.configFile ?? env.PARLANCE_CONFIG;
  let fromFile: Record<string, unknown> = {};
  if (file) {
    try {
      fromFile = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    } catch (err) {
      throw new ConfigError(`cannot read config file ${file}: ${(err as Error).message}`);
    }
    if (typeof fromFile !== 'object' || fromFile === null || Array.isArray(fromFile)) throw new ConfigError(`config file ${file} must hold a JSON object`);
    const known = new Set<string>();
    for (const [k, d] of Object.entries(settingDefs)) known.add(k).add(d.env);
    for (const k of Object.keys(fromFile)) if (!known.has(k)) throw new ConfigError(`config file ${file}: unknown setting "${k}"`);
  }
  const out: Record<string, unknown> = {};
  for (const [key, def] of Object.entries(settingDefs) as [string, SettingDef][]) {
    let raw: unknown = def.default;
    if (fromFile[key] !== undefined) raw = fromFile[key];
    else if (fromFile[def.env] !== undefined) raw = fromFile[def.env];
    if (env[def.env] !== undefined) raw = env[def.env];
    const o = opts.overrides?.[key as SettingKey];
    if (o !== undefined) raw = o;
    // Parse defaults too: a default list must not be shared (and mutated) across loads.
    out[key] = parseValue(key, def, raw);
  }
  out.dataDir = path.resolve(String(out.dataDir));
  out.modelsDir = out.modelsDir ? path.resolve(String(out.modelsDir)) : path.join(String(out.dataDir), 'models');
  return out as Settings;
}
