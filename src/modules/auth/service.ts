// Authentication and temporary keys. Knows nothing of HTTP or WebSockets: every surface hands over the key
// string it received and gets an AuthContext back, or an ApiError to render in its own shape.
import { type Clock, systemClock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { ApiError } from '../../wire/api-error.js';
import { issueTemporaryKey, keyMatches, MAX_KEY_LENGTH, parseKey } from './key-codec.js';
import { requirePermission, type PermissionScope } from './permissions.js';
import type { KeyRepository } from './repository.js';

export type UsageType = 'transcribe_websocket' | 'tts_rt';
export const usageTypes: readonly UsageType[] = ['transcribe_websocket', 'tts_rt'];

/** The permission a temporary key of each usage type stands for. */
const usagePermission: Record<UsageType, PermissionScope> = {
  transcribe_websocket: 'stt_rt',
  tts_rt: 'tts_rt',
};

export type RequestSource = 'public_api' | 'playground';

/**
 * The web console's sign-in: the API key typed into the console mints a session key (a temporary key with this
 * internal usage type, never accepted by the public temporary-key endpoint) that acts with the API key's own
 * permissions and counts every action as `playground`. The console mints a new one from the API key on expiry.
 */
const PLAYGROUND_USAGE = 'playground';
export const PLAYGROUND_SESSION_SECONDS = 3600;

export interface AuthContext {
  organizationId: string;
  projectId: string;
  /** The API key behind the request (for a temporary key: the key that issued it). */
  apiKeyId: string;
  permissions: readonly string[];
  source: RequestSource;
  temporary?: {
    id: string;
    usageType: UsageType;
    maxSessionDurationSeconds: number | null;
    clientReferenceId: string | null;
  };
  /** Set when the request came with a console session key (the temporary key row's id). */
  playgroundSessionId?: string;
}

/**
 * Who billable work is for, as usage and limits need it: an authenticated key's context, or a surface that vouches
 * for its own callers (Wyoming's listener: its one project, no key).
 */
export type Caller = Pick<AuthContext, 'organizationId' | 'projectId' | 'source' | 'temporary'> & { apiKeyId: string | null };

export interface TemporaryKeyRequest {
  usage_type: UsageType;
  expires_in_seconds: number;
  single_use?: boolean;
  max_session_duration_seconds?: number;
  client_reference_id?: string;
}

export interface AuthServiceOptions {
  environment: string;
  clock?: Clock;
}

const unauthenticated = (why: string) => new ApiError('unauthenticated', why);

export class AuthService {
  private readonly clock: Clock;

  constructor(
    private readonly keys: KeyRepository,
    private readonly opts: AuthServiceOptions,
  ) {
    this.clock = opts.clock ?? systemClock;
  }

  /** `Authorization` header value → the bearer token, or 401. */
  static bearerToken(header: string | undefined): string {
    if (header === undefined || header === '') throw unauthenticated('Missing API key: send "Authorization: Bearer <API_KEY>".');
    const m = /^Bearer +(\S+) *$/i.exec(header);
    if (!m) throw unauthenticated('Malformed Authorization header: expected "Bearer <API_KEY>".');
    return m[1]!;
  }

  /**
   * Authenticate a key string. Temporary keys are accepted only where `temporaryUsage` names the action
   * they were issued for; `consume` marks a single-use key spent (a session start, not a mere check).
   */
  async authenticate(key: string | undefined, opts: { temporaryUsage?: UsageType; consume?: boolean } = {}): Promise<AuthContext> {
    if (typeof key !== 'string' || key.length === 0) throw unauthenticated('Missing API key.');
    if (key.length > MAX_KEY_LENGTH) throw unauthenticated(`API key is longer than ${MAX_KEY_LENGTH} characters.`);
    const shape = parseKey(key);
    if (!shape) throw unauthenticated('Invalid API key.');
    if (shape.kind === 'temporary') return this.authenticateTemporary(key, shape.prefix, opts.temporaryUsage, opts.consume ?? true);
    const row = await this.keys.findApiKeyByPrefix(shape.prefix);
    // Compare even when no row matched, so timing does not tell a known prefix from an unknown one.
    const ok = keyMatches(key, row?.key_hash ?? '0'.repeat(64));
    if (!row || !ok) throw unauthenticated('Invalid API key.');
    if (row.revoked_at) throw unauthenticated('API key has been revoked.');
    if (row.project_deleted_at) throw unauthenticated('API key belongs to a deleted project.');
    if (row.environment !== this.opts.environment)
      throw unauthenticated(`API key was issued for the "${row.environment}" environment, not "${this.opts.environment}".`);
    return {
      organizationId: row.organization_id,
      projectId: row.project_id,
      apiKeyId: row.id,
      permissions: JSON.parse(row.permissions) as string[],
      source: row.source === 'playground' ? 'playground' : 'public_api',
    };
  }

  private async authenticateTemporary(key: string, prefix: string, usage: UsageType | undefined, consume: boolean): Promise<AuthContext> {
    const row = await this.keys.findTemporaryKeyByPrefix(prefix);
    const ok = keyMatches(key, row?.key_hash ?? '0'.repeat(64));
    if (row?.usage_type !== PLAYGROUND_USAGE && !usage) throw unauthenticated('Temporary API keys are not accepted for this action.');
    if (!row || !ok) throw unauthenticated('Invalid temporary API key.');
    const now = this.clock.now();
    if (new Date(row.expires_at) <= now) throw unauthenticated('Temporary API key has expired.');
    if (row.usage_type === PLAYGROUND_USAGE) return this.playgroundSession(row.id, row.api_key_id);
    if (!usage) throw unauthenticated('Temporary API keys are not accepted for this action.');
    if (row.usage_type !== usage) throw unauthenticated(`Temporary API key was issued for ${row.usage_type}, not ${usage}.`);
    if (row.single_use && row.consumed_at) throw unauthenticated('Single-use temporary API key has already been used.');
    const parent = await this.keys.getApiKeyWithProject(row.api_key_id);
    if (!parent || parent.revoked_at) throw unauthenticated('The API key that issued this temporary key has been revoked.');
    if (parent.project_deleted_at) throw unauthenticated('Temporary API key belongs to a deleted project.');
    if (row.single_use && consume && !(await this.keys.consumeTemporaryKey(row.id, now.toISOString())))
      throw unauthenticated('Single-use temporary API key has already been used.');
    return {
      organizationId: row.organization_id,
      projectId: row.project_id,
      apiKeyId: row.api_key_id,
      permissions: [`${usagePermission[usage]}:write`],
      source: row.source === 'playground' || parent.source === 'playground' ? 'playground' : 'public_api',
      temporary: {
        id: row.id,
        usageType: usage,
        maxSessionDurationSeconds: row.max_session_duration_seconds,
        clientReferenceId: row.client_reference_id,
      },
    };
  }

  /** A console session key acts as the API key that minted it (checked again on every use), as `playground`. */
  private async playgroundSession(sessionId: string, apiKeyId: string): Promise<AuthContext> {
    const parent = await this.keys.getApiKeyWithProject(apiKeyId);
    if (!parent || parent.revoked_at) throw unauthenticated('The API key that opened this console session has been revoked.');
    if (parent.project_deleted_at) throw unauthenticated('Console session belongs to a deleted project.');
    return {
      organizationId: parent.organization_id,
      projectId: parent.project_id,
      apiKeyId: parent.id,
      permissions: JSON.parse(parent.permissions) as string[],
      source: 'playground',
      playgroundSessionId: sessionId,
    };
  }

  /**
   * Open a console session for an API key (see PLAYGROUND_USAGE). A session cannot open another one, so it ends
   * when its hour is up or its API key is revoked.
   */
  async createPlaygroundSession(ctx: AuthContext): Promise<{ api_key: string; expires_at: string }> {
    if (ctx.temporary || ctx.playgroundSessionId) throw unauthenticated('Sign in to the console with an API key, not a temporary key.');
    return this.insertTemporary(ctx, { usage_type: PLAYGROUND_USAGE, expires_in_seconds: PLAYGROUND_SESSION_SECONDS }, 'playground');
  }

  /** Issue a temporary key. Needs the temporary-keys permission and the permission of the named service. */
  async createTemporaryKey(ctx: AuthContext, req: TemporaryKeyRequest): Promise<{ api_key: string; expires_at: string }> {
    if (ctx.temporary) throw unauthenticated('A temporary API key cannot issue temporary keys.');
    requirePermission(ctx.permissions, 'temporary_api_keys', 'write');
    requirePermission(ctx.permissions, usagePermission[req.usage_type], 'write');
    return this.insertTemporary(ctx, req, ctx.source);
  }

  private async insertTemporary(
    ctx: AuthContext,
    req: Omit<TemporaryKeyRequest, 'usage_type'> & { usage_type: string },
    source: RequestSource,
  ): Promise<{ api_key: string; expires_at: string }> {
    const issued = issueTemporaryKey();
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + req.expires_in_seconds * 1000).toISOString();
    await this.keys.insertTemporaryKey({
      id: newId(),
      organization_id: ctx.organizationId,
      project_id: ctx.projectId,
      api_key_id: ctx.apiKeyId,
      key_prefix: issued.prefix,
      key_hash: issued.hash,
      usage_type: req.usage_type,
      expires_at: expiresAt,
      single_use: req.single_use ? 1 : 0,
      consumed_at: null,
      max_session_duration_seconds: req.max_session_duration_seconds ?? null,
      client_reference_id: req.client_reference_id ?? null,
      created_at: now.toISOString(),
      source,
    });
    return { api_key: issued.key, expires_at: expiresAt };
  }
}

/**
 * When a session opened with `ctx` at `startedAt` must end (the temporary key's
 * max_session_duration_seconds), or null when uncapped. Streaming surfaces arm a timer with it.
 */
export function sessionDeadline(ctx: Pick<AuthContext, 'temporary'>, startedAt: Date): Date | null {
  const cap = ctx.temporary?.maxSessionDurationSeconds;
  return cap ? new Date(startedAt.getTime() + cap * 1000) : null;
}

/** Throws temp_api_key_session_expired once a capped session has run past its deadline. */
export function assertSessionWithinCap(ctx: AuthContext, startedAt: Date, now: Date): void {
  const deadline = sessionDeadline(ctx, startedAt);
  if (deadline && now >= deadline)
    throw new ApiError(
      'temp_api_key_session_expired',
      `Session exceeded the temporary API key's max_session_duration_seconds (${ctx.temporary!.maxSessionDurationSeconds}).`,
    );
}
