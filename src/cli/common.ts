// What every subcommand shares: the common flags, settings from them, and output in words or JSON.
import type { Command } from 'commander';
import { loadSettings, type SettingKey, type Settings } from '../config/settings.js';

export interface CommonOpts {
  dataDir?: string;
  config?: string;
  json?: boolean;
}

/** Flags that name a setting; each overrides its setting when given. */
export interface SettingFlags {
  port?: string;
  host?: string;
  ttsPort?: string;
  role?: string;
}

export function settingsFrom(opts: CommonOpts & SettingFlags): Settings {
  const overrides: Partial<Record<SettingKey, unknown>> = {};
  if (opts.dataDir !== undefined) overrides.dataDir = opts.dataDir;
  if (opts.port !== undefined) overrides.port = opts.port;
  if (opts.host !== undefined) overrides.host = opts.host;
  if (opts.ttsPort !== undefined) overrides.ttsPort = opts.ttsPort;
  if (opts.role !== undefined) overrides.role = opts.role;
  return loadSettings({ configFile: opts.config, overrides });
}

export function withCommon(cmd: Command): Command {
  return cmd
    .option('--data-dir <dir>', 'data directory (PARLANCE_DATA_DIR)')
    .option('--config <file>', 'JSON config file (PARLANCE_CONFIG)')
    .option('--json', 'print machine-readable JSON');
}

export function print(opts: CommonOpts, value: unknown, human: string): void {
  process.stdout.write(opts.json ? `${JSON.stringify(value)}\n` : `${human}\n`);
}
