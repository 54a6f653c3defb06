// USD amounts: decimal strings on the wire and in settings, integer nano-USD (1e-9) in usage rows. All
// arithmetic goes through decimal.js; a cost is rounded once, half up, to the nano-dollar when metered.
import { Decimal } from 'decimal.js';

export const NANO_PER_USD = new Decimal(1_000_000_000);

const AMOUNT = /^\d{1,15}(\.\d{1,18})?$/;

/** A non-negative decimal amount as typed by an operator ("12", "0.0005"). */
export function isAmount(value: string): boolean {
  return AMOUNT.test(value);
}

/** Integer nano-USD → canonical decimal string ("0.00003", "12", "0"). */
export function nanoToUsd(nano: number | bigint | string | Decimal): string {
  return new Decimal(nano.toString()).div(NANO_PER_USD).toFixed();
}

/** Decimal USD string → integer nano-USD (rounded half up). */
export function usdToNano(usd: string | Decimal): number {
  return new Decimal(usd).mul(NANO_PER_USD).toDecimalPlaces(0, Decimal.ROUND_HALF_UP).toNumber();
}

/** quantity × unit price in USD, rounded half up to whole nano-USD. */
export function costNano(quantity: Decimal.Value, priceUsd: string): number {
  return new Decimal(quantity).mul(priceUsd).mul(NANO_PER_USD).toDecimalPlaces(0, Decimal.ROUND_HALF_UP).toNumber();
}

export function usd(value: Decimal.Value): Decimal {
  return new Decimal(value);
}

export { Decimal };
