// `parlance serve` and `parlance admin ...`. Admin commands open the same database as the server (SQLite
// in WAL mode waits for locks), so they are safe to run while it serves.
import { Command, Option } from 'commander';
import { ConfigError, loadSettings, type SettingKey, type Settings } from '../config/settings.js';
import { createSttRegistry } from '../engines/stt/index.js';
import { defaultCatalog, ModelCatalog } from '../modules/models/catalog.js';
import { openTenancy, startServer } from '../server.js';
import { TenancyError, type TenancyService } from '../modules/tenancy/service.js';
import { ConcurrencyLimits } from '../modules/limits/concurrency.js';
import { LimitsRepository, type LimitScope, type StreamKind } from '../modules/limits/repository.js';
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

const program = new Command('parlance').description('Self-hosted speech-to-text and text-to-speech API server').showHelpAfterError();

withCommon(program.command('serve').description('run the API server and workers'))
  .option('--port <port>', 'port (PARLANCE_PORT)')
  .option('--host <host>', 'bind address (PARLANCE_HOST)')
  .option('--tts-port <port>', 'also serve text-to-speech alone on this port (PARLANCE_TTS_PORT)')
  .action(async (opts: CommonOpts & { port?: string; host?: string; ttsPort?: string }) => {
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
    if (server.ttsUrl) process.stdout.write(`Parlance TTS listening on ${server.ttsUrl}\n`);
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

const modelsCmd = program.command('models').description('speech models this server offers');

withCommon(modelsCmd.command('list').description('list speech-to-text models and aliases (as GET /v1/models)')).action(async (opts: CommonOpts) => {
  const settings = settingsFrom(opts);
  const catalog = new ModelCatalog(createSttRegistry(), defaultCatalog, settings.sttModelAliases);
  const models = catalog.list() as { id: string; aliased_model_id: string | null; transcription_mode: string; name: string }[];
  print(
    opts,
    { models },
    models.map((m) => `${m.id.padEnd(28)} ${m.transcription_mode.padEnd(10)} ${m.aliased_model_id ? `→ ${m.aliased_model_id}` : m.name}`).join('\n'),
  );
});

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof TenancyError) {
    process.stderr.write(`parlance: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`parlance: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
