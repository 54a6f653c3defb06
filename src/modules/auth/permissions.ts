// Permission names: "<scope>:<level>", level read or write; write includes read. The spec shows only
// `stt_rt:write`; the rest follow the same pattern, one scope per service area.
import { ApiError } from '../../wire/api-error.js';

export const permissionScopes = ['files', 'stt_async', 'stt_rt', 'tts_rt', 'voices', 'speakers', 'temporary_api_keys', 'usage', 'organization'] as const;
export type PermissionScope = (typeof permissionScopes)[number];
export type PermissionLevel = 'read' | 'write';

export const allWrite = (): string[] => permissionScopes.map((s) => `${s}:write`);
export const allRead = (): string[] => permissionScopes.map((s) => `${s}:read`);

export function isValidPermission(p: string): boolean {
  const [scope, level, extra] = p.split(':');
  return extra === undefined && (permissionScopes as readonly string[]).includes(scope ?? '') && (level === 'read' || level === 'write');
}

export function hasPermission(granted: readonly string[], scope: PermissionScope, level: PermissionLevel): boolean {
  return granted.includes(`${scope}:write`) || (level === 'read' && granted.includes(`${scope}:read`));
}

export function requirePermission(granted: readonly string[], scope: PermissionScope, level: PermissionLevel): void {
  if (!hasPermission(granted, scope, level)) throw new ApiError('permission_denied', `API key lacks the ${scope}:${level} permission.`);
}
