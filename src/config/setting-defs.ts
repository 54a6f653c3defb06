// The one table of settings, its entries kept by area (server-settings.ts, stt-settings.ts, tts-settings.ts,
// usage-settings.ts) and joined here. Every setting is read from (lowest to highest precedence): its default,
// the optional JSON config file, the environment, and CLI flags (settings.ts). The settings table of docs/guide/configuration.md lists each
// one (a test checks that), so adding a setting to its area file is the whole job.

import { serverSettings } from './server-settings.js';
import type { SettingDef } from './setting-definition.js';
import { sttSettings } from './stt-settings.js';
import { ttsSettings } from './tts-settings.js';
import { usageSettings } from './usage-settings.js';

const RATE_CATEGORIES = [
  'transcribe_websocket',
  'transcribe_async',
  'files',
  'tts',
  'temporary_api_key',
  'usage_logs',
  'models',
  'organization',
  'concurrency',
  'voices',
  'speakers',
] as const;
export type RateCategory = (typeof RATE_CATEGORIES)[number];
export const rateCategories: readonly RateCategory[] = RATE_CATEGORIES;

// Default requests per minute (organization, project). 0 disables a limit.
const RATE_DEFAULTS: Record<RateCategory, [number, number]> = {
  transcribe_websocket: [600, 300],
  transcribe_async: [12000, 6000], // polling: the SDK's wait() reads each job once a second
  files: [3000, 1500],
  tts: [1200, 600],
  temporary_api_key: [600, 300],
  usage_logs: [600, 300],
  models: [600, 300],
  organization: [600, 300], // organization administration endpoints
  concurrency: [600, 300], // concurrency report and concurrent-streams history
  voices: [600, 300],
  speakers: [600, 300],
};

function rateSettings(): Record<string, SettingDef> {
  const out: Record<string, SettingDef> = {};
  for (const cat of RATE_CATEGORIES) {
    const [org, project] = RATE_DEFAULTS[cat];
    const upper = cat.toUpperCase();
    out[`rate_${cat}_org`] = {
      env: `PARLANCE_RATE_${upper}_ORG_PER_MIN`,
      kind: 'int',
      min: 0,
      default: org,
      doc: `Requests per minute per organization for ${cat.replace(/_/g, ' ')} (0 = unlimited).`,
    };
    out[`rate_${cat}_project`] = {
      env: `PARLANCE_RATE_${upper}_PROJECT_PER_MIN`,
      kind: 'int',
      min: 0,
      default: project,
      doc: `Requests per minute per project for ${cat.replace(/_/g, ' ')} (0 = unlimited).`,
    };
  }
  return out;
}

export const settingDefs = {
  ...serverSettings,
  ...sttSettings,
  ...ttsSettings,
  ...usageSettings,
  ...rateSettings(),
} satisfies Record<string, SettingDef>;

type Defs = typeof settingDefs;
/** An enum setting is the union of its values (declared `as const`). */
type ValueOf<D> = D extends { kind: 'enum'; values: readonly (infer V extends string)[] }
  ? V
  : D extends { kind: 'int' | 'number' }
    ? number
    : D extends { kind: 'bool' }
      ? boolean
      : D extends { kind: 'list' }
        ? string[]
        : string;
export type Settings = { [K in keyof Defs]: ValueOf<Defs[K]> };
export type SettingKey = keyof Defs;
