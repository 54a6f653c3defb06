import { describe, expect, it } from 'vitest';
import { ApiError } from '../../wire/api-error.js';
import type { TranscriptionFields } from './schemas.js';
import { checkTranscriptionFields, knownSpeakersOf } from './transcription-rules.js';

const clip = Buffer.from('RIFF and some bytes');
const b64 = clip.toString('base64');

function issues(f: Partial<TranscriptionFields>): { location: string; message: string }[] {
  try {
    checkTranscriptionFields({ model: 'whisper-1', ...f });
  } catch (err) {
    if (err instanceof ApiError) return err.validationErrors.map((v) => ({ location: v.location, message: v.message }));
    throw err;
  }
  return [];
}

describe('known speakers', () => {
  it("decode each data URL's clip, whatever its media type and parameters; names trimmed", () => {
    const f = {
      model: 'whisper-1',
      response_format: 'diarized_json' as const,
      known_speaker_names: [' agent ', 'customer', 'caller'],
      known_speaker_references: [`data:audio/wav;base64,${b64}`, `data:audio/ogg;codecs=opus;base64,${b64}`, `data:;base64,${b64}`],
    };
    expect(checkTranscriptionFields(f)).toBe(f);
    expect(knownSpeakersOf(f)).toEqual([
      { name: 'agent', clip },
      { name: 'customer', clip },
      { name: 'caller', clip },
    ]);
    expect(knownSpeakersOf({ model: 'whisper-1' })).toEqual([]);
  });

  it('name every rule broken, each at its field and position', () => {
    const url = `data:audio/wav;base64,${b64}`;
    expect(
      issues({ known_speaker_names: ['a', '7', 'a', ' '], known_speaker_references: [url, 'data:audio/wav,plain', url, 'data:audio/wav;base64,@@'] }),
    ).toEqual([
      { location: 'response_format', message: 'must be diarized_json with known speakers (the only format that names speakers)' },
      { location: 'known_speaker_names.1', message: 'must not be digits only' },
      { location: 'known_speaker_names.2', message: 'repeats "a"' },
      { location: 'known_speaker_names.3', message: 'must not be empty' },
      { location: 'known_speaker_references.1', message: 'must be a base64 data URL of audio, such as data:audio/wav;base64,...' },
      { location: 'known_speaker_references.3', message: 'is not valid base64 after "base64,"' },
    ]);
    expect(issues({ response_format: 'diarized_json', known_speaker_names: ['a', 'b'], known_speaker_references: [url] })).toEqual([
      {
        location: 'known_speaker_references',
        message: 'must pair known_speaker_names with known_speaker_references, one clip per name (got 2 names, 1 clips)',
      },
    ]);
    expect(issues({ response_format: 'json' })).toEqual([]);
  });
});
