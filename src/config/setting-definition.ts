// One entry of the settings table: each area file (server-settings.ts, stt-settings.ts, ...) declares its entries
// with this shape, and setting-defs.ts joins them.

export type Kind = 'string' | 'int' | 'number' | 'bool' | 'list' | 'enum';

export interface SettingDef<K extends Kind = Kind> {
  env: string;
  kind: K;
  default: unknown;
  doc: string;
  values?: readonly string[];
  min?: number;
}
