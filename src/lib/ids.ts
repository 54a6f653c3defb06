import { randomBytes, randomUUID } from 'node:crypto';

export const newId = (): string => randomUUID();

/** Request ids: unique per request, short enough for logs. */
export const newRequestId = (): string => `req_${randomBytes(12).toString('base64url')}`;

export const randomToken = (bytes: number): string => randomBytes(bytes).toString('base64url');
