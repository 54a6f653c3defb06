// AuthService against real databases (SQLite in a temp dir and a fresh PostgreSQL database), with real
// TenancyService and KeyRepository. Only the clock is injected, so expiry is tested without sleeping.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPgDatabase, tempDir } from '../../../test/harness.js';
import { openDatabase, type Db } from '../../storage/database.js';
import { ApiError } from '../../wire/api-error.js';
import { TenancyRepository } from '../tenancy/repository.js';
import { TenancyService } from '../tenancy/service.js';
import { allRead, allWrite } from './permissions.js';
import { KeyRepository } from './repository.js';
import { assertSessionWithinCap, AuthService, PLAYGROUND_SESSION_SECONDS, sessionDeadline, type AuthContext } from './service.js';

const T0 = Date.parse('2025-03-01T12:00:00.000Z');

class TestClock {
  t = T0;
  now(): Date {
    return new Date(this.t);
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

async function apiErrorOf(p: Promise<unknown> | (() => unknown)): Promise<ApiError> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError, but the call succeeded');
}

async function expectRefused(p: Promise<unknown>, type = 'unauthenticated', message?: RegExp): Promise<void> {
  const err = await apiErrorOf(p);
  expect(err.type).toBe(type);
  expect(err.status).toBe(type === 'unauthenticated' ? 401 : 403);
  if (message) expect(err.message).toMatch(message);
}

describe.each(['sqlite', 'postgres'] as const)('AuthService on %s', (dialect) => {
  let dir: string;
  let pgDrop: (() => Promise<void>) | undefined;
  let db: Db;
  let tenancy: TenancyService;
  let auth: AuthService;
  let clock: TestClock;
  let projectId: string;
  let organizationId: string;
  /** A key with every permission, and its context. */
  let fullKey: string;
  let full: AuthContext;

  beforeAll(async () => {
    dir = tempDir('parlance-auth-');
    let databaseUrl: string | undefined;
    if (dialect === 'postgres') {
      const pg = await createPgDatabase();
      databaseUrl = pg.url;
      pgDrop = pg.drop;
    }
    db = await openDatabase({ dataDir: dir, databaseUrl });
    expect(db.dialect).toBe(dialect);
    clock = new TestClock();
    const keys = new KeyRepository(db.kysely);
    tenancy = new TenancyService(new TenancyRepository(db.kysely), keys, { environment: 'production', clock });
    auth = new AuthService(keys, { environment: 'production', clock });
    const b = await tenancy.bootstrap();
    projectId = b.project_id;
    organizationId = b.organization_id;
    fullKey = b.api_key;
    full = await auth.authenticate(fullKey);
  });

  afterAll(async () => {
    await db?.close();
    await pgDrop?.();
    rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    clock.t = T0;
  });

  const newKey = async (opts: Partial<Parameters<TenancyService['createKey']>[0]> = {}) => tenancy.createKey({ projectId, ...opts });

  describe('API keys', () => {
    it('authenticates a key to its organization, project, key id and permissions', async () => {
      const k = await newKey();
      const ctx = await auth.authenticate(k.api_key);
      expect(ctx).toEqual({ organizationId, projectId, apiKeyId: k.id, permissions: allWrite(), source: 'public_api' });
    });

    it('marks playground keys as such', async () => {
      const k = await newKey({ playground: true });
      expect((await auth.authenticate(k.api_key)).source).toBe('playground');
    });

    it('stores read-only keys with read permissions only', async () => {
      const k = await newKey({ readOnly: true });
      expect((await auth.authenticate(k.api_key)).permissions).toEqual(allRead());
      const narrowed = await newKey({ readOnly: true, permissions: ['files:write', 'stt_rt:write'] });
      expect((await auth.authenticate(narrowed.api_key)).permissions).toEqual(['files:read', 'stt_rt:read']);
    });

    it('refuses missing and empty keys', async () => {
      await expectRefused(auth.authenticate(undefined), 'unauthenticated', /missing/i);
      await expectRefused(auth.authenticate(''), 'unauthenticated', /missing/i);
    });

    it('refuses an unknown well-formed key of 256 characters as invalid, and 257 as too long', async () => {
      const k256 = `prl_${'x'.repeat(252)}`;
      expect(k256).toHaveLength(256);
      await expectRefused(auth.authenticate(k256), 'unauthenticated', /^Invalid API key/);
      await expectRefused(auth.authenticate(`${k256}x`), 'unauthenticated', /longer than 256/);
    });

    it('refuses a key with a known lookup prefix but a wrong secret', async () => {
      const k = await newKey();
      const forged = k.key_prefix + 'A'.repeat(k.api_key.length - k.key_prefix.length);
      expect(forged).not.toBe(k.api_key);
      await expectRefused(auth.authenticate(forged), 'unauthenticated', /Invalid API key/);
      await expectRefused(auth.authenticate(`${k.api_key}A`), 'unauthenticated');
    });

    it('refuses a revoked key from the moment of revocation', async () => {
      const k = await newKey();
      await auth.authenticate(k.api_key);
      await tenancy.revokeKey(k.id);
      await expectRefused(auth.authenticate(k.api_key), 'unauthenticated', /revoked/);
    });

    it('refuses a key issued for another environment', async () => {
      const k = await newKey({ environment: 'staging' });
      await expectRefused(auth.authenticate(k.api_key), 'unauthenticated', /staging/);
      const keys = new KeyRepository(db.kysely);
      const stagingAuth = new AuthService(keys, { environment: 'staging', clock });
      expect((await stagingAuth.authenticate(k.api_key)).projectId).toBe(projectId);
      await expectRefused(stagingAuth.authenticate(fullKey), 'unauthenticated');
    });
  });

  describe('createTemporaryKey', () => {
    it('returns a temp: key and expires_at = now + expires_in_seconds', async () => {
      const r = await auth.createTemporaryKey(full, { usage_type: 'transcribe_websocket', expires_in_seconds: 300 });
      expect(Object.keys(r).sort()).toEqual(['api_key', 'expires_at']);
      expect(r.api_key).toMatch(/^temp:/);
      expect(r.expires_at).toBe(new Date(T0 + 300_000).toISOString());
    });

    it('needs temporary_api_keys:write', async () => {
      const k = await newKey({ permissions: ['stt_rt:write', 'tts_rt:write', 'temporary_api_keys:read'] });
      const ctx = await auth.authenticate(k.api_key);
      await expectRefused(
        auth.createTemporaryKey(ctx, { usage_type: 'transcribe_websocket', expires_in_seconds: 60 }),
        'permission_denied',
        /temporary_api_keys:write/,
      );
    });

    it('needs the write permission of the service named in usage_type', async () => {
      const k = await newKey({ permissions: ['temporary_api_keys:write', 'stt_rt:write', 'tts_rt:read'] });
      const ctx = await auth.authenticate(k.api_key);
      await expectRefused(auth.createTemporaryKey(ctx, { usage_type: 'tts_rt', expires_in_seconds: 60 }), 'permission_denied', /tts_rt:write/);
      const ok = await auth.createTemporaryKey(ctx, { usage_type: 'transcribe_websocket', expires_in_seconds: 60 });
      expect(ok.api_key).toMatch(/^temp:/);
    });

    it('refuses a read-only key', async () => {
      const k = await newKey({ readOnly: true });
      const ctx = await auth.authenticate(k.api_key);
      await expectRefused(auth.createTemporaryKey(ctx, { usage_type: 'transcribe_websocket', expires_in_seconds: 60 }), 'permission_denied');
    });

    it('a temporary key cannot issue temporary keys', async () => {
      const t = await auth.createTemporaryKey(full, { usage_type: 'tts_rt', expires_in_seconds: 60 });
      const tctx = await auth.authenticate(t.api_key, { temporaryUsage: 'tts_rt' });
      await expectRefused(auth.createTemporaryKey(tctx, { usage_type: 'tts_rt', expires_in_seconds: 60 }), 'unauthenticated');
    });
  });

  describe('temporary keys', () => {
    const temp = (req: Partial<Parameters<AuthService['createTemporaryKey']>[1]> = {}) =>
      auth.createTemporaryKey(full, { usage_type: 'transcribe_websocket', expires_in_seconds: 60, ...req });

    it('are accepted for the usage they were issued for, standing for that service only', async () => {
      const t = await temp({ client_reference_id: 'user-7', max_session_duration_seconds: 120 });
      const ctx = await auth.authenticate(t.api_key, { temporaryUsage: 'transcribe_websocket' });
      expect(ctx).toMatchObject({ organizationId, projectId, apiKeyId: full.apiKeyId, permissions: ['stt_rt:write'], source: 'public_api' });
      expect(ctx.temporary).toMatchObject({ usageType: 'transcribe_websocket', maxSessionDurationSeconds: 120, clientReferenceId: 'user-7' });
      const tts = await temp({ usage_type: 'tts_rt' });
      expect((await auth.authenticate(tts.api_key, { temporaryUsage: 'tts_rt' })).permissions).toEqual(['tts_rt:write']);
    });

    it('are refused (unauthenticated) for the other usage', async () => {
      const stt = await temp();
      await expectRefused(auth.authenticate(stt.api_key, { temporaryUsage: 'tts_rt' }), 'unauthenticated', /transcribe_websocket/);
      const tts = await temp({ usage_type: 'tts_rt' });
      await expectRefused(auth.authenticate(tts.api_key, { temporaryUsage: 'transcribe_websocket' }), 'unauthenticated');
      // The refusal did not spoil the key for its own usage.
      await auth.authenticate(tts.api_key, { temporaryUsage: 'tts_rt' });
    });

    it('are refused on REST (no temporaryUsage)', async () => {
      const t = await temp();
      await expectRefused(auth.authenticate(t.api_key), 'unauthenticated', /not accepted/);
      await expectRefused(auth.authenticate(t.api_key, {}), 'unauthenticated');
    });

    it('are refused once expired: valid 1 ms before expires_at, refused at it', async () => {
      const t = await temp({ expires_in_seconds: 30 });
      clock.t = T0 + 30_000 - 1;
      await auth.authenticate(t.api_key, { temporaryUsage: 'transcribe_websocket' });
      clock.t = T0 + 30_000;
      await expectRefused(auth.authenticate(t.api_key, { temporaryUsage: 'transcribe_websocket' }), 'unauthenticated', /expired/);
      clock.t = T0 + 3_600_000;
      await expectRefused(auth.authenticate(t.api_key, { temporaryUsage: 'transcribe_websocket' }), 'unauthenticated', /expired/);
    });

    it('refuse a forged temp key with a known prefix', async () => {
      const t = await temp();
      const forged = t.api_key.slice(0, 13) + 'Q'.repeat(t.api_key.length - 13);
      expect(forged).not.toBe(t.api_key);
      await expectRefused(auth.authenticate(forged, { temporaryUsage: 'transcribe_websocket' }), 'unauthenticated', /Invalid temporary/);
    });

    it('single_use: works once, then refused; a mere check (consume: false) does not spend it', async () => {
      const t = await temp({ single_use: true });
      await auth.authenticate(t.api_key, { temporaryUsage: 'transcribe_websocket', consume: false });
      await auth.authenticate(t.api_key, { temporaryUsage: 'transcribe_websocket', consume: false });
      await auth.authenticate(t.api_key, { temporaryUsage: 'transcribe_websocket' });
      await expectRefused(auth.authenticate(t.api_key, { temporaryUsage: 'transcribe_websocket' }), 'unauthenticated', /already been used/);
      await expectRefused(auth.authenticate(t.api_key, { temporaryUsage: 'transcribe_websocket', consume: false }), 'unauthenticated');
    });

    it('without single_use: works many times', async () => {
      const t = await temp();
      for (let i = 0; i < 3; i++) await auth.authenticate(t.api_key, { temporaryUsage: 'transcribe_websocket' });
    });

    it('single_use under concurrency: exactly one of 5 simultaneous sessions gets through', async () => {
      const t = await temp({ single_use: true });
      const results = await Promise.allSettled(Array.from({ length: 5 }, () => auth.authenticate(t.api_key, { temporaryUsage: 'transcribe_websocket' })));
      const ok = results.filter((r) => r.status === 'fulfilled');
      const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(ok).toHaveLength(1);
      expect(refused).toHaveLength(4);
      for (const r of refused) expect((r.reason as ApiError).type).toBe('unauthenticated');
    });

    it('are refused once the API key that issued them is revoked', async () => {
      const parent = await newKey();
      const pctx = await auth.authenticate(parent.api_key);
      const t = await auth.createTemporaryKey(pctx, { usage_type: 'tts_rt', expires_in_seconds: 600 });
      await auth.authenticate(t.api_key, { temporaryUsage: 'tts_rt' });
      await tenancy.revokeKey(parent.id);
      await expectRefused(auth.authenticate(t.api_key, { temporaryUsage: 'tts_rt' }), 'unauthenticated', /revoked/);
    });
  });

  describe('session cap (max_session_duration_seconds)', () => {
    it('ends a capped session at exactly the cap with temp_api_key_session_expired (403), not before', async () => {
      const t = await auth.createTemporaryKey(full, { usage_type: 'tts_rt', expires_in_seconds: 60, max_session_duration_seconds: 90 });
      const ctx = await auth.authenticate(t.api_key, { temporaryUsage: 'tts_rt' });
      const start = new Date(T0 + 5_000);
      expect(sessionDeadline(ctx, start)?.toISOString()).toBe(new Date(T0 + 5_000 + 90_000).toISOString());
      expect(() => assertSessionWithinCap(ctx, start, start)).not.toThrow();
      expect(() => assertSessionWithinCap(ctx, start, new Date(start.getTime() + 89_999))).not.toThrow();
      const err = await apiErrorOf(() => assertSessionWithinCap(ctx, start, new Date(start.getTime() + 90_000)));
      expect(err.type).toBe('temp_api_key_session_expired');
      expect(err.status).toBe(403);
      const later = await apiErrorOf(() => assertSessionWithinCap(ctx, start, new Date(start.getTime() + 500_000)));
      expect(later.type).toBe('temp_api_key_session_expired');
    });

    it('the session cap outlives the key: a session may run past expires_at, up to its cap', async () => {
      const t = await auth.createTemporaryKey(full, { usage_type: 'transcribe_websocket', expires_in_seconds: 1, max_session_duration_seconds: 18000 });
      const ctx = await auth.authenticate(t.api_key, { temporaryUsage: 'transcribe_websocket' });
      const start = clock.now();
      expect(() => assertSessionWithinCap(ctx, start, new Date(T0 + 17_999_999))).not.toThrow();
      expect(() => assertSessionWithinCap(ctx, start, new Date(T0 + 18_000_000))).toThrow(ApiError);
    });

    it('uncapped temporary keys and regular keys never end by session duration', async () => {
      const t = await auth.createTemporaryKey(full, { usage_type: 'transcribe_websocket', expires_in_seconds: 60 });
      const tctx = await auth.authenticate(t.api_key, { temporaryUsage: 'transcribe_websocket' });
      expect(tctx.temporary?.maxSessionDurationSeconds).toBeNull();
      const start = new Date(T0);
      const muchLater = new Date(T0 + 365 * 24 * 3600 * 1000);
      for (const ctx of [tctx, full]) {
        expect(sessionDeadline(ctx, start)).toBeNull();
        expect(() => assertSessionWithinCap(ctx, start, muchLater)).not.toThrow();
      }
    });
  });

  describe('console (playground) sessions', () => {
    it('act as the API key that opened them, on REST and streaming alike, counted as playground', async () => {
      const k = await newKey({ readOnly: true });
      const kctx = await auth.authenticate(k.api_key);
      const session = await auth.createPlaygroundSession(kctx);
      expect(session.expires_at).toBe(new Date(T0 + PLAYGROUND_SESSION_SECONDS * 1000).toISOString());
      const rest = await auth.authenticate(session.api_key);
      expect(rest).toMatchObject({ organizationId, projectId, apiKeyId: k.id, permissions: kctx.permissions, source: 'playground' });
      expect(rest.temporary).toBeUndefined();
      expect((await auth.authenticate(session.api_key, { temporaryUsage: 'tts_rt' })).source).toBe('playground');
    });

    it("mint WebSocket keys that count as playground, while an API key's stay public_api", async () => {
      const session = await auth.authenticate((await auth.createPlaygroundSession(full)).api_key);
      const fromSession = await auth.createTemporaryKey(session, { usage_type: 'transcribe_websocket', expires_in_seconds: 60 });
      const fromKey = await auth.createTemporaryKey(full, { usage_type: 'transcribe_websocket', expires_in_seconds: 60 });
      expect((await auth.authenticate(fromSession.api_key, { temporaryUsage: 'transcribe_websocket' })).source).toBe('playground');
      expect((await auth.authenticate(fromKey.api_key, { temporaryUsage: 'transcribe_websocket' })).source).toBe('public_api');
    });

    it('cannot be opened by a temporary key or by another session; end at expiry and when the key is revoked', async () => {
      const parent = await newKey();
      const pctx = await auth.authenticate(parent.api_key);
      const session = await auth.createPlaygroundSession(pctx);
      const sctx = await auth.authenticate(session.api_key);
      await expectRefused(auth.createPlaygroundSession(sctx), 'unauthenticated', /not a temporary key/);
      const t = await auth.createTemporaryKey(pctx, { usage_type: 'tts_rt', expires_in_seconds: 60 });
      await expectRefused(auth.createPlaygroundSession(await auth.authenticate(t.api_key, { temporaryUsage: 'tts_rt' })), 'unauthenticated');
      clock.advance(PLAYGROUND_SESSION_SECONDS * 1000);
      await expectRefused(auth.authenticate(session.api_key), 'unauthenticated', /expired/);
      clock.t = T0;
      await tenancy.revokeKey(parent.id);
      await expectRefused(auth.authenticate(session.api_key), 'unauthenticated', /revoked/);
    });
  });
});
