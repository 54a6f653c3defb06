import { describe, expect, it } from 'vitest';
import { ApiError } from '../../wire/api-error.js';
import { allRead, allWrite, hasPermission, isValidPermission, MODELS_ADMIN, permissionScopes, requirePermission } from './permissions.js';

describe('hasPermission', () => {
  it('write includes read', () => {
    expect(hasPermission(['files:write'], 'files', 'write')).toBe(true);
    expect(hasPermission(['files:write'], 'files', 'read')).toBe(true);
  });

  it('read does not include write', () => {
    expect(hasPermission(['files:read'], 'files', 'read')).toBe(true);
    expect(hasPermission(['files:read'], 'files', 'write')).toBe(false);
  });

  it('a permission of one scope grants nothing in another', () => {
    expect(hasPermission(['stt_rt:write'], 'files', 'read')).toBe(false);
    expect(hasPermission(['stt_rt:write'], 'tts_rt', 'write')).toBe(false);
    expect(hasPermission(['temporary_api_keys:write'], 'stt_rt', 'write')).toBe(false);
    expect(hasPermission([], 'files', 'read')).toBe(false);
  });

  it('matches whole names only (no prefix or substring matches)', () => {
    expect(hasPermission(['files:writer'], 'files', 'write')).toBe(false);
    expect(hasPermission(['xfiles:write'], 'files', 'read')).toBe(false);
    expect(hasPermission(['files'], 'files', 'read')).toBe(false);
    expect(hasPermission(['files:*'], 'files', 'read')).toBe(false);
  });

  it('allWrite grants every scope at both levels; allRead only reads', () => {
    for (const scope of permissionScopes) {
      expect(hasPermission(allWrite(), scope, 'write')).toBe(true);
      expect(hasPermission(allRead(), scope, 'read')).toBe(true);
      expect(hasPermission(allRead(), scope, 'write')).toBe(false);
    }
  });
});

describe('models:admin', () => {
  it('is granted by name only: no default set has it, and no other permission stands for it', () => {
    expect(isValidPermission(MODELS_ADMIN)).toBe(true);
    expect(isValidPermission('models:write')).toBe(false);
    expect(isValidPermission('models:read')).toBe(false);
    expect(hasPermission([MODELS_ADMIN], 'models', 'admin')).toBe(true);
    expect(hasPermission(allWrite(), 'models', 'admin')).toBe(false);
    expect(hasPermission(['organization:write', 'models:write'], 'models', 'admin')).toBe(false);
    expect(() => requirePermission(allWrite(), 'models', 'admin')).toThrow('API key lacks the models:admin permission.');
  });
});

describe('isValidPermission', () => {
  it("accepts <scope>:read|write for known scopes, including the spec's stt_rt:write", () => {
    expect(isValidPermission('stt_rt:write')).toBe(true);
    for (const scope of permissionScopes) {
      expect(isValidPermission(`${scope}:read`)).toBe(true);
      expect(isValidPermission(`${scope}:write`)).toBe(true);
    }
  });

  it('refuses unknown scopes, unknown levels and extra parts', () => {
    for (const p of ['', 'files', 'files:', ':read', 'files:admin', 'nope:read', 'files:read:x', 'Files:read', 'files:READ', ' files:read'])
      expect(isValidPermission(p), p).toBe(false);
  });
});

describe('requirePermission', () => {
  it('passes silently when granted', () => {
    expect(() => requirePermission(['files:read'], 'files', 'read')).not.toThrow();
  });

  it('throws 403 permission_denied naming the missing permission', () => {
    let caught: unknown;
    try {
      requirePermission(['files:read'], 'files', 'write');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ApiError);
    const e = caught as ApiError;
    expect(e.type).toBe('permission_denied');
    expect(e.status).toBe(403);
    expect(e.message).toContain('files:write');
  });
});
