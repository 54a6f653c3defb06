// The billing check every billable action runs before it starts (REST creates, async job start, streaming
// session start). Today it enforces the prepaid balance; monthly budgets need usage metering and arrive with
// the billing issue, behind this same interface.
import type { TenancyRepository } from '../tenancy/repository.js';
import { ApiError } from '../../wire/api-error.js';

export interface BillingGuard {
  /** Throws a 402 ApiError (organization_balance_exhausted, ...) when the action must not start. */
  assertCanStart(organizationId: string, projectId: string): Promise<void>;
}

/** Decimal USD string > 0, without floating point (amounts are stored as decimal strings). */
function isPositive(amount: string): boolean {
  return /^\d+(\.\d+)?$/.test(amount) && /[1-9]/.test(amount);
}

export class BalanceGuard implements BillingGuard {
  constructor(private readonly tenancy: TenancyRepository) {}

  async assertCanStart(organizationId: string): Promise<void> {
    const org = await this.tenancy.getOrganization(organizationId);
    if (!org) throw new ApiError('unauthenticated', 'Organization no longer exists.');
    if (org.invoice_billing_enabled) return;
    if (!isPositive(org.available_balance_usd))
      throw new ApiError('organization_balance_exhausted', 'Organization balance is exhausted: add funds or enable invoice billing.');
  }
}
