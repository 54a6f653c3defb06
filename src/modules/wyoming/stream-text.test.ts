import { describe, expect, it } from 'vitest';
import { sniffFormat } from './stream-text.js';

describe('sniffFormat', () => {
  it('waits while the text could still open a <speak> document', () => {
    for (const t of ['', '  \n', '<', ' <s', '<speak', '<?x', '<?xml version="1.0"', '<?xml version="1.0"?>', '<?xml version="1.0"?>\n<spe'])
      expect(sniffFormat(t), JSON.stringify(t)).toBeUndefined();
  });

  it('reads SSML once <speak is followed by a space, > or /', () => {
    for (const t of ['<speak>', ' \n<speak version="1.0"', '<speak/>', '<?xml version="1.0"?><speak>Hi'])
      expect(sniffFormat(t), JSON.stringify(t)).toBe('ssml');
  });

  it('reads plain text as soon as it cannot be SSML', () => {
    for (const t of ['H', '  The lights', '<speaker', '<b>', '<?xml version="1.0"?>Hello', '< speak>']) expect(sniffFormat(t), JSON.stringify(t)).toBe('text');
  });
});
