import { createHmac } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { generateSigningSecret, isValidSigningSecret, signWebhook } from './signing.js';

// The example secret from the Standard Webhooks specification.
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('Standard Webhooks signing', () => {
  it('produces the three headers, verifiable with the reference package', () => {
    const now = new Date();
    const body = JSON.stringify({ id: '0b7a7c1e-3d4f-4c43-9a2e-0f6a3c9b8d11', status: 'completed' });
    const h = signWebhook(SECRET, 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W', now, body);
    expect(h['webhook-id']).toBe('msg_2KWPBgLlAfxdpx2AI54pPJ85f4W');
    expect(h['webhook-timestamp']).toBe(String(Math.floor(now.getTime() / 1000)));
    expect(h['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+={0,2}$/);
    expect(new Webhook(SECRET).verify(body, { ...h })).toEqual(JSON.parse(body));
  });

  it('is HMAC-SHA256 of "{id}.{timestamp}.{body}" keyed with the decoded secret (independent check)', () => {
    const ts = new Date(1_700_000_000_123);
    const body = '{"id":"x","status":"error"}';
    const h = signWebhook(SECRET, 'msg_1', ts, body);
    const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
    const expected = createHmac('sha256', key).update(`msg_1.1700000000.${body}`).digest('base64');
    expect(h['webhook-timestamp']).toBe('1700000000');
    expect(h['webhook-signature']).toBe(`v1,${expected}`);
  });

  it('fails verification for a changed body or another secret', () => {
    const body = '{"id":"a","status":"completed"}';
    const h = signWebhook(SECRET, 'msg_2', new Date(), body);
    expect(() => new Webhook(SECRET).verify(body.replace('completed', 'error'), { ...h })).toThrow(WebhookVerificationError);
    expect(() => new Webhook(generateSigningSecret()).verify(body, { ...h })).toThrow(WebhookVerificationError);
  });

  it('validates secrets', () => {
    expect(isValidSigningSecret(SECRET)).toBe(true);
    expect(isValidSigningSecret(SECRET.slice('whsec_'.length))).toBe(true);
    const fresh = generateSigningSecret();
    expect(fresh).toMatch(/^whsec_/);
    expect(isValidSigningSecret(fresh)).toBe(true);
    expect(isValidSigningSecret('whsec_')).toBe(false);
    expect(isValidSigningSecret('whsec_not base64!')).toBe(false);
    expect(isValidSigningSecret('whsec_c2hvcnQ=')).toBe(false); // 5 bytes
    expect(() => signWebhook('whsec_???', 'm', new Date(), '{}')).toThrow(TypeError);
    expect(() => signWebhook(SECRET, 'has space', new Date(), '{}')).toThrow(TypeError);
  });
});
