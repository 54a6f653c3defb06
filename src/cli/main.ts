// `parlance serve` and `parlance admin ...`. Admin commands open the same database as the server (SQLite
// in WAL mode waits for locks), so they are safe to run while it serves.
import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { ConfigError, loadSettings, type SettingKey, type Settings } from '../config/settings.js';
import { createSttRegistry } from '../engines/stt/index.js';
import { createTranslationRegistry, translationOptionsFrom } from '../engines/translate/registry.js';
import { MODEL_TYPES, type ModelFamily, ModelManifestError } from '../engines/model-dir/manifest.js';
import { PullError, pullModel, removeModel } from '../engines/model-dir/pull.js';
import { ModelCatalog } from '../modules/models/catalog.js';
import { catalogOf, installedModels } from '../modules/models/installed.js';
import { openTenancy } from '../modules/tenancy/open.js';
import { TenancyError, type TenancyService } from '../modules/tenancy/service.js';
import { LimitsRepository, type LimitScope, type StreamKind } from '../modules/limits/repository.js';
import type { OrganizationRow } from '../modules/tenancy/repository.js';
import { isAmount } from '../modules/usage/money.js';
import { PRICE_UNITS, PriceTable } from '../modules/usage/prices.js';
import { UsageRepository } from '../modules/usage/repository.js';
import type { Db } from '../storage/database.js';

interface CommonOpts {
  dataDir?: string;
  config?: string;
  json?: boolean;
}

function settingsFrom(opts: CommonOpts & { port?: string; host?: string; ttsPort?: string }): Settings {
  const overrides: Partial<Record<SettingKey, unknown>> = {};
  if (opts.dataDir !== undefined) overrides.dataDir = opts.dataDir;
  if (opts.port !== undefined) overrides.port = opts.port;
  if (opts.host !== undefined) overrides.host = opts.host;
  if (opts.ttsPort !== undefined) overrides.ttsPort = opts.ttsPort;
  return loadSettings({ configFile: opts.config, overrides });
}

function withCommon(cmd: Command): Command {
  return cmd
    .option('--data-dir <dir>', 'data directory (PARLANCE_DATA_DIR)')
    .option('--config <file>', 'JSON config file (PARLANCE_CONFIG)')
    .option('--json', 'print machine-readable JSON');
}

function print(opts: CommonOpts, value: unknown, human: string): void {
  process.stdout.write(opts.json ? `${JSON.stringify(value)}\n` : `${human}\n`);
}

/** Run an admin action against the data dir's database, closing it afterwards. */
async function admin(opts: CommonOpts, action: (t: TenancyService, db: Db, settings: Settings) => Promise<void>, create = false): Promise<void> {
  const settings = settingsFrom(opts);
  const { tenancy, db, close } = await openTenancy(settings, { mustExist: !create });
  try {
    await action(tenancy, db, settings);
  } finally {
    await close();
  }
}

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
const program = new Command('parlance')
  .description('Self-hosted speech-to-text and text-to-speech API server')
  .version(version, '-V, --version', 'print the version')
  .showHelpAfterError();

withCommon(program.command('serve').description('run the API server and workers'))
  .option('--port <port>', 'port (PARLANCE_PORT)')
  .option('--host <host>', 'bind address (PARLANCE_HOST)')
  .option('--tts-port <port>', 'also serve text-to-speech alone on this port (PARLANCE_TTS_PORT)')
  .action(async (opts: CommonOpts & { port?: string; host?: string; ttsPort?: string }) => {
    const settings = settingsFrom(opts);
    // Loaded here, not at the top: admin commands need none of the HTTP stack or the engines.
    const { startServer } = await import('../server.js');
    const server = await startServer(settings);
    if (server.bootstrap) {
      const b = server.bootstrap;
      process.stdout.write(
        [
          'First start: created an organization, a project and an API key.',
          `  organization_id: ${b.organization_id}`,
          `  project_id:      ${b.project_id}`,
          `  api_key:         ${b.api_key}`,
          'The key is shown only this once; store it now (`parlance admin create-key` issues more).',
          '',
        ].join('\n'),
      );
    }
    if (server.ttsUrl) process.stdout.write(`Parlance TTS listening on ${server.ttsUrl}\n`);
    process.stdout.write(`Parlance listening on ${server.url} (data dir ${settings.dataDir}, ${server.ctx.db.dialect})\n`);
    // The first signal drains live sessions and requests (PARLANCE_SHUTDOWN_DRAIN_SECONDS); a second one stops at once.
    const hurry = new AbortController();
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) {
        process.stderr.write(`received ${signal} again, closing what is left now\n`);
        return hurry.abort();
      }
      stopping = true;
      process.stderr.write(`received ${signal}, shutting down\n`);
      await server.close({ drainMs: settings.shutdownDrainSeconds * 1000, hurry: hurry.signal });
      process.exit(0);
    };
    process.on('SIGINT', () => void stop('SIGINT'));
    process.on('SIGTERM', () => void stop('SIGTERM'));
  });

const adminCmd = program.command('admin').description('organizations, projects, API keys, balance and budgets');

withCommon(adminCmd.command('bootstrap').description('create the first organization, project and key (or a new key for them)')).action(
  async (opts: CommonOpts) =>
    admin(opts, async (t) => {
      const b = await t.bootstrap();
      const out = { organization_id: b.organization_id, project_id: b.project_id, api_key: b.api_key };
      print(opts, out, `organization_id: ${out.organization_id}\nproject_id:      ${out.project_id}\napi_key:         ${out.api_key}`);
    }, true),
);

withCommon(adminCmd.command('create-organization').description('create another organization (then create-project --organization)'))
  .requiredOption('--name <name>', 'organization name')
  .action(async (opts: CommonOpts & { name: string }) =>
    admin(opts, async (t) => {
      const o = await t.createOrganization(opts.name);
      print(opts, { id: o.id, name: o.name, created_at: o.created_at }, `organization ${o.id} (${o.name})`);
    }),
  );

withCommon(adminCmd.command('create-project').description('create a project in the organization'))
  .requiredOption('--name <name>', 'project name')
  .option('--organization <id>', 'organization (default: the first)')
  .option('--description <text>', 'description', '')
  .option('--region <region>', 'region')
  .action(async (opts: CommonOpts & { name: string; organization?: string; description: string; region?: string }) =>
    admin(opts, async (t) => {
      const p = await t.createProject({ organizationId: opts.organization, name: opts.name, description: opts.description, region: opts.region });
      const out = { id: p.id, name: p.name, description: p.description, region: p.region, created_at: p.created_at };
      print(opts, out, `project ${p.id} (${p.name}, region ${p.region})`);
    }),
  );

withCommon(adminCmd.command('list-projects').description('list projects')).action(async (opts: CommonOpts) =>
  admin(opts, async (t) => {
    const projects = (await t.allProjects()).map((p) => ({ id: p.id, name: p.name, description: p.description, region: p.region, created_at: p.created_at }));
    print(opts, { projects }, projects.map((p) => `${p.id}  ${p.name}  ${p.region}`).join('\n') || '(no projects)');
  }),
);

withCommon(adminCmd.command('delete-project').description('delete a project: it leaves listings and its keys are refused at once; its data and usage stay'))
  .argument('<project_id>', 'project id (see list-projects)')
  .action(async (projectId: string, opts: CommonOpts) =>
    admin(opts, async (t) => {
      const p = await t.deleteProject(projectId);
      print(opts, { id: p.id, name: p.name, deleted_at: p.deleted_at }, `deleted project ${p.id} (${p.name})`);
    }),
  );

withCommon(adminCmd.command('create-key').description('issue an API key for a project (the secret is printed once)'))
  .requiredOption('--project <id>', 'project id')
  .option('--name <name>', 'key name', 'API key')
  .option('--read-only', 'read permissions only')
  .option('--permission <perm...>', 'explicit permissions, e.g. files:write stt_rt:write')
  .option('--environment <env>', 'environment the key is valid in (default: the server\'s)')
  .option('--playground', 'count this key\'s requests as playground rather than public_api')
  .action(
    async (
      opts: CommonOpts & { project: string; name: string; readOnly?: boolean; permission?: string[]; environment?: string; playground?: boolean },
    ) =>
      admin(opts, async (t) => {
        const k = await t.createKey({
          projectId: opts.project,
          name: opts.name,
          readOnly: opts.readOnly,
          permissions: opts.permission,
          environment: opts.environment,
          playground: opts.playground,
        });
        print(opts, k, `key ${k.id} (${k.key_prefix}…)\napi_key: ${k.api_key}`);
      }),
  );

withCommon(adminCmd.command('list-keys').description('list API keys (never the secrets)'))
  .option('--project <id>', 'only this project')
  .action(async (opts: CommonOpts & { project?: string }) =>
    admin(opts, async (t) => {
      const keys = await t.listKeys(opts.project);
      print(
        opts,
        { api_keys: keys },
        keys.map((k) => `${k.id}  ${k.key_prefix}…  ${k.name}  ${k.revoked_at ? `revoked ${k.revoked_at}` : 'active'}  [${k.permissions.join(' ')}]`).join('\n') ||
          '(no keys)',
      );
    }),
  );

withCommon(adminCmd.command('revoke-key').description('revoke an API key; requests with it are refused from then on'))
  .argument('<key_id>', 'key id (see list-keys)')
  .action(async (keyId: string, opts: CommonOpts) =>
    admin(opts, async (t) => {
      await t.revokeKey(keyId);
      print(opts, { id: keyId, revoked: true }, `revoked ${keyId}`);
    }),
  );

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

withCommon(adminCmd.command('set-balance').description('set the organization\'s prepaid balance, billing mode and payment flags'))
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

withCommon(adminCmd.command('set-budget').description('set the monthly budget (USD, calendar month UTC) and notification threshold of the organization or a project'))
  .option('--organization <id>', 'organization (default: the first)')
  .option('--project <id>', 'set the project\'s budget instead of the organization\'s')
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

/** "12" → 12, "none" → null (unlimited), "default" → undefined (remove the override: the setting applies). */
function limitValue(flag: string, v: string): number | null | 'default' {
  if (v === 'none' || v === 'unlimited') return null;
  if (v === 'default') return 'default';
  if (!/^\d+$/.test(v) || Number(v) > 1_000_000) throw new TenancyError(`${flag} must be a whole number of streams, "none" (unlimited) or "default", got "${v}"`);
  return Number(v);
}

withCommon(
  adminCmd
    .command('set-limits')
    .description('override concurrency caps for the organization or one project (without values: show the effective caps)'),
)
  .option('--organization <id>', 'organization (default: the first)')
  .option('--project <id>', 'set the project\'s caps instead of the organization\'s')
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
        if (!org) throw new TenancyError(opts.organization ? `no such organization: ${opts.organization}` : 'no organization (run `parlance admin bootstrap` first)');
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

withCommon(adminCmd.command('set-price').description('set (or with "default", remove) a price override: USD per unit of a model; model "*" prices every model without its own'))
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

const modelsCmd = program.command('models').description('speech models this server offers');

withCommon(modelsCmd.command('list').description('list speech-to-text models and aliases (as GET /v1/models)')).action(async (opts: CommonOpts) => {
  const settings = settingsFrom(opts);
  const translation = await createTranslationRegistry({ ...translationOptionsFrom(settings), apertium: { ...translationOptionsFrom(settings).apertium, idleMs: 0 } });
  const installed = installedModels(settings);
  const offered = catalogOf(installed, settings);
  const catalog = new ModelCatalog(createSttRegistry({ installed }), offered.catalog, offered.aliases, translation);
  const models = catalog.list() as { id: string; aliased_model_id: string | null; transcription_mode: string; name: string }[];
  print(
    opts,
    { models },
    models.map((m) => `${m.id.padEnd(28)} ${m.transcription_mode.padEnd(10)} ${m.aliased_model_id ? `→ ${m.aliased_model_id}` : m.name}`).join('\n'),
  );
  await translation.close();
});

withCommon(
  modelsCmd
    .command('pull')
    .description('download a model archive (sherpa-onnx .tar.bz2, by URL or path) into the models directory, with its parlance-model.json; restart the server to offer it')
    .argument('<source>', 'URL or local path of the archive')
    .requiredOption('--family <family>', 'stt-offline, stt-streaming, tts or speaker-embedding')
    .requiredOption('--type <type>', 'model type within the family, e.g. whisper, nemo-transducer, transducer, vits')
    .option('--id <id>', 'public model id ending in a version (default: the archive name with -v1)')
    .option('--name <name>', 'display name')
    .option('--language <code...>', 'languages (ISO 639-1; default en)')
    .option('--alias <id...>', 'public ids to take over, e.g. stt-async-v4')
    .option('--sha256 <hex>', 'expected SHA-256 of the archive'),
).action(async (source: string, opts: CommonOpts & { family: string; type: string; id?: string; name?: string; language?: string[]; alias?: string[]; sha256?: string }) => {
  const settings = settingsFrom(opts);
  if (!(opts.family in MODEL_TYPES)) throw new PullError(`--family must be one of: ${Object.keys(MODEL_TYPES).join(', ')}`);
  const m = await pullModel({ source, modelsDir: settings.modelsDir, family: opts.family as ModelFamily, type: opts.type, id: opts.id, name: opts.name, languages: opts.language, aliases: opts.alias, sha256: opts.sha256 });
  print(opts, { model: { id: m.id, dir: m.dir, family: m.family, type: m.type, files: m.files, aliases: m.aliases ?? [] } }, `${m.id}: ${m.family} ${m.type} model in ${m.dir} (restart the server to offer it)`);
});

withCommon(modelsCmd.command('remove').description('remove a model you brought (its folder in the models directory); restart the server').argument('<id>', 'the model id')).action(
  async (id: string, opts: CommonOpts) => {
    const dir = removeModel(settingsFrom(opts).modelsDir, id);
    if (!dir) throw new PullError(`no model ${id} in the models directory`);
    print(opts, { removed: { id, dir } }, `removed ${id} (${dir})`);
  },
);

withCommon(modelsCmd.command('translations').description('list the installed translation directions (apertium pairs found at start-up)')).action(
  async (opts: CommonOpts) => {
    const settings = settingsFrom(opts);
    const translation = await createTranslationRegistry({ ...translationOptionsFrom(settings), apertium: { ...translationOptionsFrom(settings).apertium, idleMs: 0 } });
    const pairs = translation.pairs();
    print(opts, { pairs }, pairs.length ? pairs.map((p) => `${p.source} -> ${p.target}`).join('\n') : 'no translation pairs installed');
    await translation.close();
  },
);

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof TenancyError || err instanceof PullError || err instanceof ModelManifestError) {
    process.stderr.write(`parlance: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`parlance: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
