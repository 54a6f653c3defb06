// Settings table, one area of it: usage prices and checks, and machine translation. Aggregated in setting-defs.ts (order kept: it is the
// settings table's order in docs/guide/configuration.md).
import type { SettingDef } from './setting-definition.js';

export const usageSettings = {
  usagePrices: {
    env: 'PARLANCE_USAGE_PRICES',
    kind: 'list',
    default: [
      'parlance-async-en-v1:input_audio_second=0.00003',
      'parlance-rt-en-v1:input_audio_second=0.00005',
      '*:input_character=0.00001',
      '*:output_audio_second=0.00002',
    ],
    doc: 'Price table in USD, `model:unit=price` entries; unit is `input_audio_second`, `input_character` or `output_audio_second`; model `*` prices every model without its own entry. `parlance admin set-price` overrides entries.',
  },
  usageCheckIntervalSeconds: {
    env: 'PARLANCE_USAGE_CHECK_INTERVAL_SECONDS',
    kind: 'number',
    min: 0.1,
    default: 5,
    doc: 'How often a running real-time session re-checks balance and budgets with its cost so far (ended with a 402 frame when exhausted).',
  },
  translationEnabled: {
    env: 'PARLANCE_TRANSLATION_ENABLED',
    kind: 'bool',
    default: true,
    doc: 'Offer translation (async and real time) with the installed apertium pairs; false hides every pair.',
  },
  apertiumDataDir: {
    env: 'PARLANCE_APERTIUM_DATA_DIR',
    kind: 'string',
    default: '/usr/share/apertium',
    doc: 'Apertium data directory; its `modes/` lists the translation pairs, discovered at start-up (install `apertium-<pair>` packages and restart to add pairs).',
  },
  translationMaxProcesses: {
    env: 'PARLANCE_TRANSLATION_MAX_PROCESSES',
    kind: 'int',
    min: 1,
    default: 2,
    doc: 'Translation processes (apertium pipelines) running at once; further translations wait their turn.',
  },
  translationSpareIdleSeconds: {
    env: 'PARLANCE_TRANSLATION_SPARE_IDLE_SECONDS',
    kind: 'number',
    min: 0,
    default: 120,
    doc: 'Keep one loaded spare apertium process per recently used pair this long, hiding its start-up time (0 = none).',
  },
  translationTimeoutSeconds: {
    env: 'PARLANCE_TRANSLATION_TIMEOUT_SECONDS',
    kind: 'number',
    min: 0.1,
    default: 30,
    doc: 'Longest one translation call may run before it is killed (the job or session then fails with internal_error).',
  },
} satisfies Record<string, SettingDef>;
