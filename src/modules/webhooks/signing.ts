// Standard Webhooks signatures (standardwebhooks.com): three headers per delivery,
//   webhook-id: <message id, the same on every retry of one message>
//   webhook-timestamp: <unix seconds of this attempt>
//   webhook-signature: v1,<base64 HMAC-SHA256 over "{id}.{timestamp}.{body}">
// keyed with the base64-decoded part of a `whsec_<base64>` secret. Signing is done by the reference package
// (`standardwebhooks`, Webhook.sign), so what we send is what its verify() and the other language ports accept.
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

export const SIGNING_SECRET_PREFIX = 'whsec_';

export interface StandardWebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * True for a usable secret: `whsec_` (optional) followed by standard base64 of 24 to 64 bytes, the key size the
 * Standard Webhooks spec asks for.
 */
export function isValidSigningSecret(secret: string): boolean {
  const b64 = secret.startsWith(SIGNING_SECRET_PREFIX) ? secret.slice(SIGNING_SECRET_PREFIX.length) : secret;
  if (b64 === '' || !BASE64.test(b64)) return false;
  const bytes = Buffer.from(b64, 'base64').length;
  return bytes >= 24 && bytes <= 64;
}

/** A new random secret, `whsec_` + base64 of 32 bytes. */
export function generateSigningSecret(): string {
  return SIGNING_SECRET_PREFIX + randomBytes(32).toString('base64');
}

/**
 * The three Standard Webhooks headers for one delivery attempt of `payload` (the exact body bytes sent).
 * Throws TypeError on an invalid secret (check configuration with isValidSigningSecret).
 */
export function signWebhook(secret: string, messageId: string, timestamp: Date, payload: string): StandardWebhookHeaders {
  if (!isValidSigningSecret(secret)) throw new TypeError('webhook signing secret must be whsec_ followed by base64 of 24 to 64 bytes');
  if (messageId === '' || /\s/.test(messageId)) throw new TypeError('webhook message id must be non-empty and without whitespace');
  const seconds = Math.floor(timestamp.getTime() / 1000);
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(seconds),
    'webhook-signature': new Webhook(secret).sign(messageId, new Date(seconds * 1000), payload),
  };
}
