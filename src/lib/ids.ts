import { randomBytes, randomUUID } from 'node:crypto';

export const newId = (): string => randomUUID();

/** Request ids: unique per request. randomUUID draws from a cached entropy pool (randomBytes per request showed in profiles). */
export const newRequestId = (): string => `req_${randomUUID()}`;

export const randomToken = (bytes: number): string => randomBytes(bytes).toString('base64url');
