// `parlance admin ...`: balance, funds, budgets, concurrency caps and prices.
import { type Command, Option } from 'commander';
import { LimitsRepository, type LimitScope, type StreamKind } from '../modules/limits/repository.js';
import type { OrganizationRow } from '../modules/tenancy/repository.js';
import { TenancyError, type TenancyService } from '../modules/tenancy/service.js';
import { isAmount } from '../modules/usage/money.js';
import { PRICE_UNITS, PriceTable } from '../modules/usage/prices.js';
import { UsageRepository } from '../modules/usage/repository.js';
import { admin } from './admin-commands.js';
import { type CommonOpts, print, settingsFrom, withCommon } from './common.js';

const onOff = (v: string | undefined): 0 | 1 | undefined => (v === undefined ? undefined : v === 'on' ? 1 : 0);
const amountOrNone = (v: string | undefined): string | null | undefined => (v === undefined ? undefined : v === 'none' ? null : v);

function balanceView(o: OrganizationRow) {
  return {
    organization_id: o.id,
    available_balance_usd: o.available_balance_usd,
    free_balance_usd: o.free_balance_usd,
    used_balance_usd: o.used_balance_usd,
    invoice_billing_enabled: o.invoice_billing_enabled === 1,
    autopay_enabled: o.autopay_enabled === 1,
    autopay_threshold_usd: o.autopay_threshold_usd,
    autopay_amount_usd: o.autopay_amount_usd,
    has_payment_method: o.has_payment_method === 1,
    has_payment_error: o.has_payment_error === 1,
  };
}
const balanceLine = (o: OrganizationRow) =>
  `organization ${o.id}: available ${o.available_balance_usd} USD (free ${o.free_balance_usd}), used ${o.used_balance_usd}, invoice billing ${o.invoice_billing_enabled ? 'on' : 'off'}`;

async function organizationOf(t: TenancyService, id: string | undefined): Promise<OrganizationRow> {
  const org = await t.organization(id);
  if (!org) throw new TenancyError(id ? `no such organization: ${id}` : 'no organization (run `parlance admin bootstrap` first)');
  return org;
}

/** "12" → 12, "none" → null (unlimited), "default" → undefined (remove the override: the setting applies). */
function limitValue(flag: string, v: string): number | null | 'default' {
  if (v === 'none' || v === 'unlimited') return null;
  if (v === 'default') return 'default';
  if (!/^\d+$/.test(v) || Number(v) > 1_000_000)
    throw new TenancyError(`${flag} must be a whole number of streams, "none" (unlimited) or "default", got "${v}"`);
  return Number(v);
}

export function adminBillingCommands(adminCmd: Command): void {
  withCommon(adminCmd.command('set-balance').description("set the organization's prepaid balance, billing mode and payment flags"))
    .option('--organization <id>', 'organization (default: the first)')
    .option('--available-usd <amount>', 'available balance in USD')
    .option('--free-usd <amount>', 'granted part of the available balance in USD')
    .option('--used-usd <amount>', 'balance spent so far in USD')
    .addOption(new Option('--invoice-billing <on|off>', 'invoice usage instead of drawing from the balance').choices(['on', 'off']))
    .addOption(new Option('--autopay <on|off>', 'automatic top-up flag').choices(['on', 'off']))
    .option('--autopay-threshold-usd <amount>', 'autopay threshold in USD, or "none"')
    .option('--autopay-amount-usd <amount>', 'autopay amount in USD, or "none"')
    .addOption(new Option('--payment-method <on|off>', 'a payment method is on file').choices(['on', 'off']))
    .addOption(new Option('--payment-error <on|off>', 'the last payment attempt failed').choices(['on', 'off']))
    .action(
      async (
        opts: CommonOpts & {
          organization?: string;
          availableUsd?: string;
          freeUsd?: string;
          usedUsd?: string;
          invoiceBilling?: string;
          autopay?: string;
          autopayThresholdUsd?: string;
          autopayAmountUsd?: string;
          paymentMethod?: string;
          paymentError?: string;
        },
      ) =>
        admin(opts, async (t) => {
          const org = await organizationOf(t, opts.organization);
          const patch: Parameters<TenancyService['setOrganizationBilling']>[1] = {};
          if (opts.availableUsd !== undefined) patch.available_balance_usd = opts.availableUsd;
          if (opts.freeUsd !== undefined) patch.free_balance_usd = opts.freeUsd;
          if (opts.usedUsd !== undefined) patch.used_balance_usd = opts.usedUsd;
          if (opts.invoiceBilling !== undefined) patch.invoice_billing_enabled = onOff(opts.invoiceBilling)!;
          if (opts.autopay !== undefined) patch.autopay_enabled = onOff(opts.autopay)!;
          if (opts.autopayThresholdUsd !== undefined) patch.autopay_threshold_usd = amountOrNone(opts.autopayThresholdUsd)!;
          if (opts.autopayAmountUsd !== undefined) patch.autopay_amount_usd = amountOrNone(opts.autopayAmountUsd)!;
          if (opts.paymentMethod !== undefined) patch.has_payment_method = onOff(opts.paymentMethod)!;
          if (opts.paymentError !== undefined) patch.has_payment_error = onOff(opts.paymentError)!;
          const o = await t.setOrganizationBilling(org.id, patch);
          print(opts, balanceView(o), balanceLine(o));
        }),
    );

  for (const [name, granted, what] of [
    ['grant', true, 'grant free balance: adds to the available balance and to its free part (used first)'],
    ['top-up', false, 'add paid funds to the available balance'],
  ] as const) {
    withCommon(adminCmd.command(name).description(what))
      .option('--organization <id>', 'organization (default: the first)')
      .requiredOption('--usd <amount>', 'amount in USD')
      .action(async (opts: CommonOpts & { organization?: string; usd: string }) =>
        admin(opts, async (t, db) => {
          if (!isAmount(opts.usd)) throw new TenancyError(`--usd must be a non-negative decimal amount, got "${opts.usd}"`);
          const org = await organizationOf(t, opts.organization);
          await new UsageRepository(db.kysely, db.dialect).addFunds(org.id, opts.usd, granted);
          const o = (await t.organization(org.id))!;
          print(opts, balanceView(o), balanceLine(o));
        }),
      );
  }

  withCommon(
    adminCmd.command('set-budget').description('set the monthly budget (USD, calendar month UTC) and notification threshold of the organization or a project'),
  )
    .option('--organization <id>', 'organization (default: the first)')
    .option('--project <id>', "set the project's budget instead of the organization's")
    .option('--monthly-usd <amount>', 'monthly budget in USD, or "none"')
    .option('--notify-usd <amount>', 'notification threshold in USD (one logged event per month when usage reaches it), or "none"')
    .action(async (opts: CommonOpts & { organization?: string; project?: string; monthlyUsd?: string; notifyUsd?: string }) =>
      admin(opts, async (t) => {
        if (opts.monthlyUsd === undefined && opts.notifyUsd === undefined) throw new TenancyError('give --monthly-usd and/or --notify-usd');
        if (opts.project) {
          const p = await t.setProjectBudget(opts.project, amountOrNone(opts.monthlyUsd), amountOrNone(opts.notifyUsd));
          print(
            opts,
            { project_id: p.id, monthly_budget_usd: p.monthly_budget_usd, monthly_budget_notification_usd: p.monthly_budget_notification_usd },
            `project ${p.id}: monthly budget ${p.monthly_budget_usd ?? 'none'}, notify at ${p.monthly_budget_notification_usd ?? 'none'}`,
          );
          return;
        }
        const org = await organizationOf(t, opts.organization);
        const patch: Parameters<TenancyService['setOrganizationBilling']>[1] = {};
        if (opts.monthlyUsd !== undefined) patch.monthly_budget_usd = amountOrNone(opts.monthlyUsd)!;
        if (opts.notifyUsd !== undefined) patch.monthly_budget_notification_usd = amountOrNone(opts.notifyUsd)!;
        const o = await t.setOrganizationBilling(org.id, patch);
        print(
          opts,
          { organization_id: o.id, monthly_budget_usd: o.monthly_budget_usd, monthly_budget_notification_usd: o.monthly_budget_notification_usd },
          `organization ${o.id}: monthly budget ${o.monthly_budget_usd ?? 'none'}, notify at ${o.monthly_budget_notification_usd ?? 'none'}`,
        );
      }),
    );

  withCommon(
    adminCmd.command('set-limits').description('override concurrency caps for the organization or one project (without values: show the effective caps)'),
  )
    .option('--organization <id>', 'organization (default: the first)')
    .option('--project <id>', "set the project's caps instead of the organization's")
    .option('--transcribe-concurrent <n>', 'concurrent real-time transcription streams: a number, "none" (unlimited) or "default" (the setting)')
    .option('--tts-concurrent <n>', 'concurrent text-to-speech requests and streams: a number, "none" (unlimited) or "default" (the setting)')
    .action(async (opts: CommonOpts & { organization?: string; project?: string; transcribeConcurrent?: string; ttsConcurrent?: string }) =>
      admin(opts, async (t, db, settings) => {
        const repo = new LimitsRepository(db.kysely);
        let scope: LimitScope;
        let scopeId: string;
        let orgId: string;
        let projectId = '';
        if (opts.project) {
          const p = await t.project(opts.project);
          if (!p || p.deleted_at) throw new TenancyError(`no such project: ${opts.project}`);
          [scope, scopeId, orgId, projectId] = ['project', p.id, p.organization_id, p.id];
        } else {
          const org = await t.organization(opts.organization);
          if (!org)
            throw new TenancyError(opts.organization ? `no such organization: ${opts.organization}` : 'no organization (run `parlance admin bootstrap` first)');
          [scope, scopeId, orgId] = ['organization', org.id, org.id];
        }
        const changes: [StreamKind, string, string | undefined][] = [
          ['stt', '--transcribe-concurrent', opts.transcribeConcurrent],
          ['tts', '--tts-concurrent', opts.ttsConcurrent],
        ];
        const parsed = changes.filter(([, , v]) => v !== undefined).map(([kind, flag, v]) => [kind, limitValue(flag, v!)] as const);
        const at = new Date().toISOString();
        for (const [kind, value] of parsed) {
          if (value === 'default') await repo.clearOverride(scope, scopeId, kind);
          else await repo.setOverride(scope, scopeId, kind, value, at);
        }
        const { ConcurrencyLimits } = await import('../modules/limits/concurrency.js');
        const limits = new ConcurrencyLimits(repo, {
          defaults: {
            stt: { organization: settings.realtimeConcurrentStreamsOrg, project: settings.realtimeConcurrentStreamsProject },
            tts: { organization: settings.ttsConcurrentOrg, project: settings.ttsConcurrentProject },
          },
        });
        const caps = await limits.caps(orgId, projectId);
        const out = { scope, id: scopeId, transcribe_concurrent: caps.stt[scope], tts_concurrent: caps.tts[scope] };
        const show = (n: number | null) => (n === null ? 'unlimited' : String(n));
        print(opts, out, `${scope} ${scopeId}: transcribe_concurrent ${show(out.transcribe_concurrent)}, tts_concurrent ${show(out.tts_concurrent)}`);
      }),
    );

  withCommon(
    adminCmd
      .command('set-price')
      .description('set (or with "default", remove) a price override: USD per unit of a model; model "*" prices every model without its own'),
  )
    .requiredOption('--model <id>', 'model id (the served model, e.g. parlance-rt-en-v1), or "*"')
    .addOption(new Option('--unit <unit>', 'priced unit').choices([...PRICE_UNITS]).makeOptionMandatory())
    .requiredOption('--usd <amount>', 'price in USD per unit, or "default" to fall back to the settings\' price')
    .action(async (opts: CommonOpts & { model: string; unit: string; usd: string }) =>
      admin(opts, async (_t, db) => {
        const repo = new UsageRepository(db.kysely, db.dialect);
        if (opts.usd === 'default') await repo.deletePrice(opts.model, opts.unit);
        else {
          if (!isAmount(opts.usd)) throw new TenancyError(`--usd must be a non-negative decimal amount, got "${opts.usd}"`);
          await repo.setPrice(opts.model, opts.unit, opts.usd, new Date().toISOString());
        }
        const prices = await new PriceTable(settingsFrom(opts).usagePrices, repo).pricesOf(opts.model);
        print(opts, { model: opts.model, ...prices }, `${opts.model}: ${PRICE_UNITS.map((u) => `${u} ${prices[u]} USD`).join(', ')}`);
      }),
    );

  withCommon(adminCmd.command('list-prices').description('the price table: settings defaults with admin overrides on top')).action(async (opts: CommonOpts) =>
    admin(opts, async (_t, db) => {
      const list = await new PriceTable(settingsFrom(opts).usagePrices, new UsageRepository(db.kysely, db.dialect)).list();
      print(opts, { prices: list }, list.map((p) => `${p.model.padEnd(28)} ${p.unit.padEnd(20)} ${p.price_usd} USD (${p.origin})`).join('\n'));
    }),
  );
}
