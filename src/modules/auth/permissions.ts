// Permission names: "<scope>:<level>", level read or write; write includes read. The spec shows only
// `stt_rt:write`; the rest follow the same pattern, one scope per service area. `models:admin` (the server's models:
// downloads onto its disk, removals) stands apart: granted by name only (the first-start key has it; `parlance admin
// keys create --permission models:admin`), never by default, never to a read-only or temporary key.
import { ApiError } from '../../wire/api-error.js';

export const permissionScopes = ['files', 'stt_async', 'stt_rt', 'tts_rt', 'voices', 'speakers', 'temporary_api_keys', 'usage', 'organization'] as const;
export type PermissionScope = (typeof permissionScopes)[number] | 'models';
export type PermissionLevel = 'read' | 'write' | 'admin';

/** Managing the server's models over HTTP (/v1/admin/models). */
export const MODELS_ADMIN = 'models:admin';

export const allWrite = (): string[] => permissionScopes.map((s) => `${s}:write`);
export const allRead = (): string[] => permissionScopes.map((s) => `${s}:read`);

export function isValidPermission(p: string): boolean {
  if (p === MODELS_ADMIN) return true;
  const [scope, level, extra] = p.split(':');
  return extra === undefined && (permissionScopes as readonly string[]).includes(scope ?? '') && (level === 'read' || level === 'write');
}

export function hasPermission(granted: readonly string[], scope: PermissionScope, level: PermissionLevel): boolean {
  if (level === 'admin') return granted.includes(`${scope}:admin`);
  return granted.includes(`${scope}:write`) || (level === 'read' && granted.includes(`${scope}:read`));
}

export function requirePermission(granted: readonly string[], scope: PermissionScope, level: PermissionLevel): void {
  if (!hasPermission(granted, scope, level)) throw new ApiError('permission_denied', `API key lacks the ${scope}:${level} permission.`);
}
