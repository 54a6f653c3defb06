import { describe, expect, it } from 'vitest';
import { voiceGender } from './voice-gender.js';

describe('voiceGender', () => {
  it.each([
    ['af_bella', 'female'],
    ['bm_george', 'male'],
    ['am_michael', 'male'],
    ['expr-voice-2-f', 'female'],
    ['expr-voice-5-m', 'male'],
    ['Lessac', 'neutral'],
    ['piper-en-amy', 'neutral'],
    ['af', 'neutral'],
  ])('%s is %s', (name, gender) => expect(voiceGender(name)).toBe(gender));
});
