// `parlance admin ...`: organizations, projects and API keys. Admin commands open the same database as the server
// (SQLite in WAL mode waits for locks), so they are safe to run while it serves.
import type { Command } from 'commander';
import type { Settings } from '../config/settings.js';
import { openTenancy } from '../modules/tenancy/open.js';
import type { TenancyService } from '../modules/tenancy/service.js';
import type { Db } from '../storage/database.js';
import { type CommonOpts, print, settingsFrom, withCommon } from './common.js';

/** Run an admin action against the data dir's database, closing it afterwards. */
export async function admin(opts: CommonOpts, action: (t: TenancyService, db: Db, settings: Settings) => Promise<void>, create = false): Promise<void> {
  const settings = settingsFrom(opts);
  const { tenancy, db, close } = await openTenancy(settings, { mustExist: !create });
  try {
    await action(tenancy, db, settings);
  } finally {
    await close();
  }
}

/** The `admin` command group with its account commands; returns the group for the billing commands. */
export function adminCommands(program: Command): Command {
  const adminCmd = program.command('admin').description('organizations, projects, API keys, balance and budgets');

  withCommon(adminCmd.command('bootstrap').description('create the first organization, project and key (or a new key for them)')).action(
    async (opts: CommonOpts) =>
      admin(
        opts,
        async (t) => {
          const b = await t.bootstrap();
          const out = { organization_id: b.organization_id, project_id: b.project_id, api_key: b.api_key };
          print(opts, out, `organization_id: ${out.organization_id}\nproject_id:      ${out.project_id}\napi_key:         ${out.api_key}`);
        },
        true,
      ),
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
    .option(
      '--permission <perm...>',
      "explicit permissions, e.g. files:write stt_rt:write (models:admin, managing the server's models over HTTP, is given only by name)",
    )
    .option('--environment <env>', "environment the key is valid in (default: the server's)")
    .option('--playground', "count this key's requests as playground rather than public_api")
    .action(
      async (opts: CommonOpts & { project: string; name: string; readOnly?: boolean; permission?: string[]; environment?: string; playground?: boolean }) =>
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
          keys
            .map((k) => `${k.id}  ${k.key_prefix}…  ${k.name}  ${k.revoked_at ? `revoked ${k.revoked_at}` : 'active'}  [${k.permissions.join(' ')}]`)
            .join('\n') || '(no keys)',
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

  return adminCmd;
}
