// How a metered cost is paid (when it is metered; the billing guard reads the same state before work starts): invoiced with invoice billing, otherwise drawn from the prepaid balance,
// granted (free) part first. The balance never goes below zero: a session that overshoots the last cents
// is still recorded in full as usage, but only what was available is drawn.
import { Decimal } from 'decimal.js';
import { NANO_PER_USD } from './money.js';

export interface BalanceState {
  available_balance_usd: string;
  free_balance_usd: string;
  used_balance_usd: string;
  invoice_billing_enabled: number;
}

export interface Draw {
  /** Part of the cost covered by granted balance (nano-USD). */
  freeNano: number;
  /** Part of the cost invoiced (nano-USD). */
  invoicedNano: number;
  /** New balance fields, or undefined when nothing changes. */
  patch?: Pick<BalanceState, 'available_balance_usd' | 'free_balance_usd' | 'used_balance_usd'>;
}

const dec = (v: string) => new Decimal(/^\d+(\.\d+)?$/.test(v) ? v : '0');

export function drawFromBalance(org: BalanceState, costNano: number): Draw {
  if (costNano <= 0) return { freeNano: 0, invoicedNano: 0 };
  if (org.invoice_billing_enabled) return { freeNano: 0, invoicedNano: costNano };
  const cost = new Decimal(costNano).div(NANO_PER_USD);
  const available = dec(org.available_balance_usd);
  const free = Decimal.min(dec(org.free_balance_usd), available);
  const drawn = Decimal.min(cost, available);
  const fromFree = Decimal.min(drawn, free);
  return {
    freeNano: fromFree.mul(NANO_PER_USD).toDecimalPlaces(0, Decimal.ROUND_DOWN).toNumber(),
    invoicedNano: 0,
    patch: {
      available_balance_usd: available.minus(drawn).toFixed(),
      free_balance_usd: free.minus(fromFree).toFixed(),
      used_balance_usd: dec(org.used_balance_usd).plus(drawn).toFixed(),
    },
  };
}

/** True when the balance cannot pay `pendingNano` more (always false with invoice billing). */
export function balanceExhausted(org: BalanceState, pendingNano = 0): boolean {
  if (org.invoice_billing_enabled) return false;
  return dec(org.available_balance_usd).mul(NANO_PER_USD).lte(pendingNano);
}
