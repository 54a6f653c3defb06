// Admission of a live surface's request, stream or session: who may start it (authentication, permission, rate
// limit, billing) and the concurrency slot it holds while it runs (this node's slots, then the organization and
// project caps). One class with the surface's rules, so TTS HTTP, the TTS socket and real-time STT share the same
// steps in the same order (real time validates its configuration between the rate limit and billing).
import type { RateCategory } from '../../config/settings.js';
import { ApiError } from '../../wire/api-error.js';
import { type PermissionScope, requirePermission } from '../auth/permissions.js';
import type { AuthContext, AuthService, UsageType } from '../auth/service.js';
import type { BillingGuard } from '../billing/guard.js';
import type { ConcurrencyLimits } from './concurrency.js';
import type { RateLimits } from './rate-limits.js';
import type { StreamKind } from './repository.js';

export interface AdmissionDeps {
  auth: AuthService;
  rateLimits: Pick<RateLimits, 'consume'>;
  billing: Pick<BillingGuard, 'assertCanStart'>;
  concurrency: Pick<ConcurrencyLimits, 'acquire'>;
}

/** This node's own cap, before the organization and project caps: 429 once `maxActive` are running. */
export interface NodeSlots {
  maxActive: number;
  /** The 429 to answer when the node is full (`active` requests or streams running). */
  refusal(active: number): ApiError;
  onRefused?(): void;
}

export interface AdmissionRules {
  /** The temporary key usage type this surface accepts. */
  temporaryUsage: UsageType;
  /** Needs `<permission>:write`. */
  permission: PermissionScope;
  rate: RateCategory;
  /** The kind of concurrency slot a running request holds. */
  slot: StreamKind;
  node?: NodeSlots;
}

export class Admission {
  /** Requests and streams holding a slot on this node. */
  private active = 0;

  constructor(
    private readonly deps: AdmissionDeps,
    private readonly rules: AdmissionRules,
  ) {}

  get activeCount(): number {
    return this.active;
  }

  /** A key as a client sent it (from a header or a message field), authenticated, then admitted. */
  async authorize(key: unknown): Promise<AuthContext> {
    return this.admit(await this.authenticate(key));
  }

  /** The checks after authentication: permission, rate limit, billing. */
  async admit(auth: AuthContext): Promise<AuthContext> {
    await this.permit(auth);
    await this.assertCanStart(auth);
    return auth;
  }

  /** Authentication alone (a temporary key of this surface's usage type is used up). */
  async authenticate(key: unknown): Promise<AuthContext> {
    if (key !== undefined && typeof key !== 'string') throw new ApiError('unauthenticated', 'api_key must be a string.');
    return this.deps.auth.authenticate(key, { temporaryUsage: this.rules.temporaryUsage, consume: true });
  }

  /** Permission and rate limit: a surface that checks its request between these and billing calls them apart. */
  async permit(auth: AuthContext): Promise<void> {
    requirePermission(auth.permissions, this.rules.permission, 'write');
    await this.deps.rateLimits.consume(this.rules.rate, auth.organizationId, auth.projectId);
  }

  /** Balance and budgets (402). */
  assertCanStart(auth: Pick<AuthContext, 'organizationId' | 'projectId'>): Promise<void> {
    return this.deps.billing.assertCanStart(auth.organizationId, auth.projectId);
  }

  /**
   * Take a slot for one request or stream: 429 limit_exceeded when this node is full or the organization or
   * project is at its cap. The returned release is idempotent.
   */
  async acquire(auth: Pick<AuthContext, 'organizationId' | 'projectId'>): Promise<() => void> {
    const node = this.rules.node;
    if (node && this.active >= node.maxActive) {
      const refusal = node.refusal(this.active);
      node.onRefused?.();
      throw refusal;
    }
    this.active++;
    let releaseSlot: () => void;
    try {
      releaseSlot = await this.deps.concurrency.acquire(this.rules.slot, auth);
    } catch (err) {
      this.active--;
      throw err;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      releaseSlot();
    };
  }
}
