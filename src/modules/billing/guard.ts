// The billing check every billable action runs before it starts (REST creates, async job start, streaming
// session start) and, with the cost accrued so far, while a real-time session runs. Three 402s, checked in
// this order: the prepaid balance, the organization's monthly budget, the project's monthly budget.
// Budgets count the usage of the current calendar month (UTC) and so reset on the 1st.
import { type Clock, systemClock, utcMonth } from '../../lib/clock.js';
import { ApiError } from '../../wire/api-error.js';
import type { TenancyRepository } from '../tenancy/repository.js';
import { NANO_PER_USD, Decimal } from '../usage/money.js';
import type { UsageRepository } from '../usage/repository.js';
import { balanceExhausted } from '../usage/balance.js';

export interface BillingGuard {
  /**
   * Throws a 402 ApiError (organization_balance_exhausted, organization_monthly_budget_exhausted,
   * project_monthly_budget_exhausted) when the action must not start, or must not go on having accrued
   * `pendingNano` (nano-USD) not yet recorded.
   */
  assertCanStart(organizationId: string, projectId: string, pendingNano?: number): Promise<void>;
}

/** A budget is reached when the month's usage plus what is pending is at or above it. */
function reached(budgetUsd: string | null | undefined, usedNano: number): boolean {
  if (budgetUsd === null || budgetUsd === undefined || !/^\d+(\.\d+)?$/.test(budgetUsd)) return false;
  return new Decimal(budgetUsd).mul(NANO_PER_USD).lte(usedNano);
}

export class BudgetGuard implements BillingGuard {
  constructor(
    private readonly tenancy: TenancyRepository,
    private readonly usage: UsageRepository,
    private readonly clock: Clock = systemClock,
  ) {}

  async assertCanStart(organizationId: string, projectId: string, pendingNano = 0): Promise<void> {
    const org = await this.tenancy.getOrganization(organizationId);
    if (!org) throw new ApiError('unauthenticated', 'Organization no longer exists.');
    if (balanceExhausted(org, pendingNano))
      throw new ApiError('organization_balance_exhausted', 'Organization balance is exhausted: add funds or enable invoice billing.');
    const project = await this.tenancy.getProject(projectId);
    if (org.monthly_budget_usd === null && !project?.monthly_budget_usd) return;
    const month = utcMonth(this.clock.now());
    const rows = await this.usage.monthly(organizationId, month);
    const orgUsed = rows.reduce((n, r) => n + r.cost_nusd, 0) + pendingNano;
    if (reached(org.monthly_budget_usd, orgUsed))
      throw new ApiError('organization_monthly_budget_exhausted', `Organization monthly budget of ${org.monthly_budget_usd} USD is exhausted for ${month}.`);
    const projectUsed = rows.filter((r) => r.project_id === projectId).reduce((n, r) => n + r.cost_nusd, 0) + pendingNano;
    if (reached(project?.monthly_budget_usd, projectUsed))
      throw new ApiError('project_monthly_budget_exhausted', `Project monthly budget of ${project!.monthly_budget_usd} USD is exhausted for ${month}.`);
  }
}
