import { describe, expect, it } from 'vitest';
import { recognitionContext } from './context.js';

describe('recognitionContext', () => {
  it('reads the string and the object forms', () => {
    expect(recognitionContext('Call about the invoice')).toEqual({ terms: [], text: 'Call about the invoice' });
    expect(
      recognitionContext({
        general: [{ key: 'domain', value: 'telephony' }],
        text: 'Asterisk prompts',
        terms: ['PBX', ' Digium ', 'PBX', ''],
        translation_terms: [{ source: 'voicemail', target: 'buzón de voz' }],
      }),
    ).toEqual({ terms: ['PBX', 'Digium', 'voicemail'], text: 'Asterisk prompts\ntelephony' });
  });

  it('has nothing to offer for empty or absent context', () => {
    expect(recognitionContext(null)).toBeUndefined();
    expect(recognitionContext('   ')).toBeUndefined();
    expect(recognitionContext({ terms: [], general: [] })).toBeUndefined();
  });
});
