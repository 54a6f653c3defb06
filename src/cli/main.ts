// `parlance serve` and `parlance admin ...`. Admin commands open the same database as the server (SQLite
// in WAL mode waits for locks), so they are safe to run while it serves.
import { Command, Option } from 'commander';
import { ConfigError, loadSettings, type SettingKey, type Settings } from '../config/settings.js';
import { createSttRegistry } from '../engines/stt/index.js';
import { createTranslationRegistry, translationOptionsFrom } from '../engines/translate/registry.js';
import { defaultCatalog, ModelCatalog } from '../modules/models/catalog.js';
import { openTenancy, startServer } from '../server.js';
import { TenancyError, type TenancyService } from '../modules/tenancy/service.js';

interface CommonOpts {
  dataDir?: string;
  config?: string;
  json?: boolean;
}

function settingsFrom(opts: CommonOpts & { port?: string; host?: string }): Settings {
  const overrides: Partial<Record<SettingKey, unknown>> = {};
  if (opts.dataDir !== undefined) overrides.dataDir = opts.dataDir;
  if (opts.port !== undefined) overrides.port = opts.port;
  if (opts.host !== undefined) overrides.host = opts.host;
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
async function admin(opts: CommonOpts, action: (t: TenancyService) => Promise<void>, create = false): Promise<void> {
  const { tenancy, close } = await openTenancy(settingsFrom(opts), { mustExist: !create });
  try {
    await action(tenancy);
  } finally {
    await close();
  }
}

const program = new Command('parlance').description('Self-hosted speech-to-text and text-to-speech API server').showHelpAfterError();

withCommon(program.command('serve').description('run the API server and workers'))
  .option('--port <port>', 'port (PARLANCE_PORT)')
  .option('--host <host>', 'bind address (PARLANCE_HOST)')
  .action(async (opts: CommonOpts & { port?: string; host?: string }) => {
    const settings = settingsFrom(opts);
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
    process.stdout.write(`Parlance listening on ${server.url} (data dir ${settings.dataDir}, ${server.ctx.db.dialect})\n`);
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      process.stderr.write(`received ${signal}, shutting down\n`);
      await server.close();
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

withCommon(adminCmd.command('create-project').description('create a project in the organization'))
  .requiredOption('--name <name>', 'project name')
  .option('--description <text>', 'description', '')
  .option('--region <region>', 'region')
  .action(async (opts: CommonOpts & { name: string; description: string; region?: string }) =>
    admin(opts, async (t) => {
      const p = await t.createProject({ name: opts.name, description: opts.description, region: opts.region });
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

withCommon(adminCmd.command('set-balance').description('set the organization\'s prepaid balance fields (billing rules: later release)'))
  .option('--organization <id>', 'organization (default: the first)')
  .option('--available-usd <amount>', 'available balance in USD')
  .option('--free-usd <amount>', 'granted part of the balance in USD')
  .addOption(new Option('--invoice-billing <on|off>', 'invoice usage instead of drawing from the balance').choices(['on', 'off']))
  .action(async (opts: CommonOpts & { organization?: string; availableUsd?: string; freeUsd?: string; invoiceBilling?: string }) =>
    admin(opts, async (t) => {
      const org = await t.organization(opts.organization);
      if (!org) throw new TenancyError('no organization (run `parlance admin bootstrap` first)');
      const patch: Parameters<TenancyService['setOrganizationBilling']>[1] = {};
      if (opts.availableUsd !== undefined) patch.available_balance_usd = opts.availableUsd;
      if (opts.freeUsd !== undefined) patch.free_balance_usd = opts.freeUsd;
      if (opts.invoiceBilling !== undefined) patch.invoice_billing_enabled = opts.invoiceBilling === 'on' ? 1 : 0;
      const o = await t.setOrganizationBilling(org.id, patch);
      const out = {
        organization_id: o.id,
        available_balance_usd: o.available_balance_usd,
        free_balance_usd: o.free_balance_usd,
        invoice_billing_enabled: o.invoice_billing_enabled === 1,
      };
      print(opts, out, `organization ${o.id}: available ${o.available_balance_usd} USD (free ${o.free_balance_usd}), invoice billing ${out.invoice_billing_enabled ? 'on' : 'off'}`);
    }),
  );

withCommon(adminCmd.command('set-budget').description('set a monthly budget for the organization or one project (enforcement: later release)'))
  .option('--organization <id>', 'organization (default: the first)')
  .option('--project <id>', 'set the project\'s budget instead of the organization\'s')
  .requiredOption('--monthly-usd <amount>', 'monthly budget in USD, or "none"')
  .option('--notify-usd <amount>', 'organization notification threshold in USD, or "none"')
  .action(async (opts: CommonOpts & { organization?: string; project?: string; monthlyUsd: string; notifyUsd?: string }) =>
    admin(opts, async (t) => {
      const amount = (v: string) => (v === 'none' ? null : v);
      if (opts.project) {
        const p = await t.setProjectBudget(opts.project, amount(opts.monthlyUsd));
        print(opts, { project_id: p.id, monthly_budget_usd: p.monthly_budget_usd }, `project ${p.id}: monthly budget ${p.monthly_budget_usd ?? 'none'}`);
        return;
      }
      const org = await t.organization(opts.organization);
      if (!org) throw new TenancyError('no organization (run `parlance admin bootstrap` first)');
      const patch: Parameters<TenancyService['setOrganizationBilling']>[1] = { monthly_budget_usd: amount(opts.monthlyUsd) };
      if (opts.notifyUsd !== undefined) patch.monthly_budget_notification_usd = amount(opts.notifyUsd);
      const o = await t.setOrganizationBilling(org.id, patch);
      print(
        opts,
        { organization_id: o.id, monthly_budget_usd: o.monthly_budget_usd, monthly_budget_notification_usd: o.monthly_budget_notification_usd },
        `organization ${o.id}: monthly budget ${o.monthly_budget_usd ?? 'none'}, notify at ${o.monthly_budget_notification_usd ?? 'none'}`,
      );
    }),
  );

const modelsCmd = program.command('models').description('speech models this server offers');

withCommon(modelsCmd.command('list').description('list speech-to-text models and aliases (as GET /v1/models)')).action(async (opts: CommonOpts) => {
  const settings = settingsFrom(opts);
  const translation = await createTranslationRegistry({ ...translationOptionsFrom(settings), apertium: { ...translationOptionsFrom(settings).apertium, idleMs: 0 } });
  const catalog = new ModelCatalog(createSttRegistry(), defaultCatalog, settings.sttModelAliases, translation);
  const models = catalog.list() as { id: string; aliased_model_id: string | null; transcription_mode: string; name: string }[];
  print(
    opts,
    { models },
    models.map((m) => `${m.id.padEnd(28)} ${m.transcription_mode.padEnd(10)} ${m.aliased_model_id ? `→ ${m.aliased_model_id}` : m.name}`).join('\n'),
  );
  await translation.close();
});

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
  if (err instanceof ConfigError || err instanceof TenancyError) {
    process.stderr.write(`parlance: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`parlance: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
