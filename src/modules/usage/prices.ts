// The price table: USD per unit per model. Defaults come from settings (`usagePrices`, config file or
// env); `parlance admin set-price` stores overrides in the database, which every node reads.
import type { UsageRepository } from './repository.js';
import { isAmount } from './money.js';

export const PRICE_UNITS = ['input_audio_second', 'input_character', 'output_audio_second'] as const;
export type PriceUnit = (typeof PRICE_UNITS)[number];

/** Any model without its own price for a unit falls back to this entry, then to 0. */
export const ANY_MODEL = '*';

export type PriceList = Record<PriceUnit, string>;

/** Parse `model:unit=price` entries (the settings list); throws on a malformed entry. */
export function parsePriceEntries(entries: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const raw of entries) {
    const entry = raw.trim();
    if (!entry) continue;
    const m = /^([^:=\s]+):([a-z_]+)=(\S+)$/.exec(entry);
    if (!m || !(PRICE_UNITS as readonly string[]).includes(m[2]!) || !isAmount(m[3]!))
      throw new Error(`price entry "${entry}" must be model:unit=usd with unit one of ${PRICE_UNITS.join(', ')} and a non-negative decimal price`);
    out.set(`${m[1]}:${m[2]}`, m[3]!);
  }
  return out;
}

export class PriceTable {
  private readonly defaults: Map<string, string>;
  private cache: { at: number; overrides: Map<string, string> } | undefined;

  constructor(
    entries: readonly string[],
    private readonly repo: UsageRepository,
    /** Overrides are re-read at most this often (an admin change applies within this window). */
    private readonly refreshMs = 1000,
  ) {
    this.defaults = parsePriceEntries(entries);
  }

  private async overrides(): Promise<Map<string, string>> {
    const now = Date.now();
    if (!this.cache || now - this.cache.at >= this.refreshMs) {
      const rows = await this.repo.listPrices();
      this.cache = { at: now, overrides: new Map(rows.map((r) => [`${r.model}:${r.unit}`, r.price_usd])) };
    }
    return this.cache.overrides;
  }

  /** Drop the cached overrides (after a change made by this process). */
  invalidate(): void {
    this.cache = undefined;
  }

  async pricesOf(model: string): Promise<PriceList> {
    const o = await this.overrides();
    const pick = (unit: PriceUnit) =>
      o.get(`${model}:${unit}`) ?? this.defaults.get(`${model}:${unit}`) ?? o.get(`${ANY_MODEL}:${unit}`) ?? this.defaults.get(`${ANY_MODEL}:${unit}`) ?? '0';
    return { input_audio_second: pick('input_audio_second'), input_character: pick('input_character'), output_audio_second: pick('output_audio_second') };
  }

  /** Every configured price (defaults, then overrides on top), for `parlance admin list-prices`. */
  async list(): Promise<{ model: string; unit: PriceUnit; price_usd: string; origin: 'settings' | 'admin' }[]> {
    const o = await this.overrides();
    const merged = new Map<string, { price: string; origin: 'settings' | 'admin' }>();
    for (const [k, v] of this.defaults) merged.set(k, { price: v, origin: 'settings' });
    for (const [k, v] of o) merged.set(k, { price: v, origin: 'admin' });
    return [...merged]
      .map(([k, v]) => {
        const i = k.lastIndexOf(':');
        return { model: k.slice(0, i), unit: k.slice(i + 1) as PriceUnit, price_usd: v.price, origin: v.origin };
      })
      .sort((a, b) => (a.model === b.model ? a.unit.localeCompare(b.unit) : a.model.localeCompare(b.model)));
  }
}
