// Organizations, projects and API keys: the operator's side of tenancy (the admin CLI and first start).
import { Decimal } from 'decimal.js';
import { type Clock, systemClock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { issueApiKey } from '../auth/key-codec.js';
import { allRead, allWrite, isValidPermission, MODELS_ADMIN } from '../auth/permissions.js';
import type { ApiKeyRow, KeyRepository } from '../auth/repository.js';
import type { OrganizationRow, ProjectRow, TenancyRepository } from './repository.js';

export class TenancyError extends Error {}

export interface CreateKeyInput {
  projectId: string;
  name?: string;
  readOnly?: boolean;
  permissions?: string[];
  environment?: string;
  playground?: boolean;
  createdBy?: string;
  createdByKeyId?: string | null;
}

export interface IssuedApiKey {
  id: string;
  api_key: string;
  key_prefix: string;
}

/** A key as it may be shown: everything but the secret and its hash. */
export interface ApiKeyRecord {
  id: string;
  project_id: string;
  key_prefix: string;
  name: string;
  permissions: string[];
  environment: string;
  created_at: string;
  created_by: string;
  created_by_key_id: string | null;
  revoked_at: string | null;
}

export function toKeyRecord(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    project_id: row.project_id,
    key_prefix: row.key_prefix,
    name: row.name,
    permissions: JSON.parse(row.permissions) as string[],
    environment: row.environment,
    created_at: row.created_at,
    created_by: row.created_by,
    created_by_key_id: row.created_by_key_id,
    revoked_at: row.revoked_at,
  };
}

export interface TenancyOptions {
  environment: string;
  defaultRegion?: string;
  clock?: Clock;
}

export class TenancyService {
  private readonly clock: Clock;

  constructor(
    private readonly tenancy: TenancyRepository,
    private readonly keys: KeyRepository,
    private readonly opts: TenancyOptions,
  ) {
    this.clock = opts.clock ?? systemClock;
  }

  private now(): string {
    return this.clock.now().toISOString();
  }

  /**
   * First organization, project and a fresh key. On a data dir that already has them, reuses the
   * organization and its first project and issues a new key (secrets are stored only as hashes).
   */
  async bootstrap(): Promise<{ organization_id: string; project_id: string; api_key: string; created: boolean }> {
    let org = await this.tenancy.firstOrganization();
    let created = false;
    if (!org) {
      const id = newId();
      await this.tenancy.insertOrganization({ id, name: 'Default organization', created_at: this.now() });
      org = (await this.tenancy.getOrganization(id))!;
      created = true;
    }
    let project = (await this.tenancy.listProjects(org.id))[0];
    if (!project) project = await this.createProject({ organizationId: org.id, name: 'Default project' });
    // The operator's own key: every service, and the server's models.
    const key = await this.createKey({
      projectId: project.id,
      name: created ? 'bootstrap' : 'bootstrap (reissued)',
      createdBy: 'bootstrap',
      permissions: [...allWrite(), MODELS_ADMIN],
    });
    return { organization_id: org.id, project_id: project.id, api_key: key.api_key, created };
  }

  /** Another organization (operators hosting several teams on one server). */
  async createOrganization(name: string): Promise<OrganizationRow> {
    if (!name.trim()) throw new TenancyError('organization name must not be empty');
    const id = newId();
    await this.tenancy.insertOrganization({ id, name, created_at: this.now() });
    return (await this.tenancy.getOrganization(id))!;
  }

  async isBootstrapped(): Promise<boolean> {
    return (await this.tenancy.firstOrganization()) !== undefined;
  }

  async createProject(input: { organizationId?: string; name: string; description?: string; region?: string }): Promise<ProjectRow> {
    if (!input.name.trim()) throw new TenancyError('project name must not be empty');
    const orgId = input.organizationId ?? (await this.tenancy.firstOrganization())?.id;
    if (!orgId || !(await this.tenancy.getOrganization(orgId))) throw new TenancyError('no such organization (run `parlance admin bootstrap` first)');
    const row = {
      id: newId(),
      organization_id: orgId,
      name: input.name,
      description: input.description ?? '',
      region: input.region ?? this.opts.defaultRegion ?? 'local',
      created_at: this.now(),
    };
    await this.tenancy.insertProject(row);
    return (await this.tenancy.getProject(row.id))!;
  }

  /**
   * Soft-delete a project: it leaves listings, its keys stop authenticating at once, and its files,
   * transcriptions and usage stay stored (monthly usage still counts it).
   */
  async deleteProject(projectId: string): Promise<ProjectRow> {
    const project = await this.tenancy.getProject(projectId);
    if (!project) throw new TenancyError(`no such project: ${projectId}`);
    if (project.deleted_at) throw new TenancyError(`project ${projectId} was already deleted at ${project.deleted_at}`);
    if (!(await this.tenancy.softDeleteProject(projectId, this.now()))) throw new TenancyError(`project ${projectId} was already deleted`);
    return (await this.tenancy.getProject(projectId))!;
  }

  async project(projectId: string): Promise<ProjectRow | undefined> {
    return this.tenancy.getProject(projectId);
  }

  async createKey(input: CreateKeyInput): Promise<IssuedApiKey> {
    const project = await this.tenancy.getProject(input.projectId);
    if (!project || project.deleted_at) throw new TenancyError(`no such project: ${input.projectId}`);
    let permissions = input.permissions?.length ? [...new Set(input.permissions)] : input.readOnly ? allRead() : allWrite();
    const bad = permissions.filter((p) => !isValidPermission(p));
    if (bad.length) throw new TenancyError(`unknown permission(s): ${bad.join(', ')}`);
    if (input.readOnly) permissions = permissions.filter((p) => p !== MODELS_ADMIN).map((p) => p.replace(/:write$/, ':read'));
    const issued = issueApiKey();
    const id = newId();
    await this.keys.insertApiKey({
      id,
      organization_id: project.organization_id,
      project_id: project.id,
      name: input.name ?? 'API key',
      key_prefix: issued.prefix,
      key_hash: issued.hash,
      permissions: JSON.stringify(permissions),
      environment: input.environment ?? this.opts.environment,
      source: input.playground ? 'playground' : 'public_api',
      created_at: this.now(),
      created_by: input.createdBy ?? 'admin',
      created_by_key_id: input.createdByKeyId ?? null,
      revoked_at: null,
    });
    return { id, api_key: issued.key, key_prefix: issued.prefix };
  }

  async listKeys(projectId?: string, includeRevoked = true): Promise<ApiKeyRecord[]> {
    const projects = projectId ? [projectId] : (await this.allProjects()).map((p) => p.id);
    const out: ApiKeyRecord[] = [];
    for (const id of projects) out.push(...(await this.keys.listApiKeys(id, includeRevoked)).map(toKeyRecord));
    return out;
  }

  async revokeKey(keyId: string): Promise<void> {
    const row = await this.keys.getApiKey(keyId);
    if (!row) throw new TenancyError(`no such key: ${keyId}`);
    if (!(await this.keys.revokeApiKey(keyId, this.now()))) throw new TenancyError(`key ${keyId} is already revoked`);
  }

  async allProjects(): Promise<ProjectRow[]> {
    const org = await this.tenancy.firstOrganization();
    return org ? this.tenancy.listProjects(org.id) : [];
  }

  async organization(id?: string): Promise<OrganizationRow | undefined> {
    return id ? this.tenancy.getOrganization(id) : this.tenancy.firstOrganization();
  }

  /** Balance, billing-setup and budget fields (the billing rules live in modules/billing). */
  async setOrganizationBilling(
    orgId: string,
    patch: Partial<
      Pick<
        OrganizationRow,
        | 'available_balance_usd'
        | 'free_balance_usd'
        | 'used_balance_usd'
        | 'invoice_billing_enabled'
        | 'autopay_enabled'
        | 'autopay_threshold_usd'
        | 'autopay_amount_usd'
        | 'has_payment_method'
        | 'has_payment_error'
        | 'monthly_budget_usd'
        | 'monthly_budget_notification_usd'
      >
    >,
  ): Promise<OrganizationRow> {
    for (const [k, v] of Object.entries(patch))
      if (typeof v === 'string' && !/^\d{1,15}(\.\d{1,18})?$/.test(v)) throw new TenancyError(`${k} must be a non-negative decimal amount, got "${v}"`);
    const current = await this.tenancy.getOrganization(orgId);
    if (!current) throw new TenancyError(`no such organization: ${orgId}`);
    // The granted part is part of the available balance, never more than it.
    const available = new Decimal(patch.available_balance_usd ?? current.available_balance_usd);
    const free = new Decimal(patch.free_balance_usd ?? current.free_balance_usd);
    if (free.gt(available)) throw new TenancyError(`the free (granted) balance ${free} cannot exceed the available balance ${available}`);
    if (Object.keys(patch).length && !(await this.tenancy.updateOrganization(orgId, patch))) throw new TenancyError(`no such organization: ${orgId}`);
    return (await this.tenancy.getOrganization(orgId))!;
  }

  async setProjectBudget(projectId: string, monthlyBudgetUsd: string | null | undefined, notificationUsd?: string | null): Promise<ProjectRow> {
    for (const v of [monthlyBudgetUsd, notificationUsd])
      if (typeof v === 'string' && !/^\d{1,15}(\.\d{1,18})?$/.test(v)) throw new TenancyError(`budget must be a non-negative decimal amount, got "${v}"`);
    const patch: Partial<ProjectRow> = {};
    if (monthlyBudgetUsd !== undefined) patch.monthly_budget_usd = monthlyBudgetUsd;
    if (notificationUsd !== undefined) patch.monthly_budget_notification_usd = notificationUsd;
    const project = await this.tenancy.getProject(projectId);
    if (!project) throw new TenancyError(`no such project: ${projectId}`);
    if (Object.keys(patch).length) await this.tenancy.updateProject(projectId, patch);
    return (await this.tenancy.getProject(projectId))!;
  }
}
