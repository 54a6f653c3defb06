// The rules between the fields of an OpenAI transcription form, after its schema's (schemas.ts): the context the
// prompt and keywords make, and the known speakers (names paired with reference clips sent as data URLs, which are
// decoded here).
import { invalidFields, type ValidationIssue } from '../../wire/api-error.js';
import { MAX_CONTEXT_CHARS } from '../realtime/config.js';
import type { ReferenceLimits } from '../speakers/reference-clips.js';
import { contextChars, MAX_REFERENCE_BYTES, type TranscriptionFields } from './schemas.js';

/**
 * What a reference clip must be. OpenAI asks for 2 to 10 seconds; half a second either way spares clips an encoder
 * padded or cut to the limit. The speech is what the diarizer measures a voice on.
 */
export const REFERENCE_LIMITS: ReferenceLimits = { maxBytes: MAX_REFERENCE_BYTES, minSeconds: 1.5, maxSeconds: 10.5, minSpeechMs: 1000 };

/** `data:[<media type>][;<parameter>...];base64,<data>`: the clip's bytes start after the comma. */
const DATA_URL = /^data:(?:[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+)?(?:;[^;,]+)*;base64,/i;
const BASE64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;

/** A known speaker as the form names it: the name, and its clip's bytes. */
export interface KnownSpeakerClip {
  name: string;
  clip: Buffer;
}

function knownSpeakerIssues(f: TranscriptionFields): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const issue = (location: string, message: string, error_type = 'invalid_value') => issues.push({ error_type, location, message });
  const names = f.known_speaker_names ?? [];
  const refs = f.known_speaker_references ?? [];
  if (names.length === 0 && refs.length === 0) return issues;
  if ((f.response_format ?? 'json') !== 'diarized_json')
    issue('response_format', 'must be diarized_json with known speakers (the only format that names speakers)');
  if (names.length !== refs.length) {
    const short = names.length < refs.length ? 'known_speaker_names' : 'known_speaker_references';
    issue(short, `must pair known_speaker_names with known_speaker_references, one clip per name (got ${names.length} names, ${refs.length} clips)`, 'missing');
  }
  const seen = new Set<string>();
  names.forEach((raw, i) => {
    const name = raw.trim();
    if (!name) issue(`known_speaker_names.${i}`, 'must not be empty', 'invalid_length');
    else if (/^\d+$/.test(name)) issue(`known_speaker_names.${i}`, 'must not be digits only');
    else if (seen.has(name)) issue(`known_speaker_names.${i}`, `repeats "${name}"`);
    seen.add(name);
  });
  refs.forEach((ref, i) => {
    const head = DATA_URL.exec(ref);
    if (!head) issue(`known_speaker_references.${i}`, 'must be a base64 data URL of audio, such as data:audio/wav;base64,...', 'invalid_format');
    else if (!BASE64.test(ref.slice(head[0].length))) issue(`known_speaker_references.${i}`, 'is not valid base64 after "base64,"', 'invalid_format');
  });
  return issues;
}

/** The rules between the transcription fields, after the schema's: the fields, or invalid_request naming each bad one. */
export function checkTranscriptionFields(f: TranscriptionFields): TranscriptionFields {
  const issues: ValidationIssue[] = [];
  const chars = contextChars(f.prompt, f.keywords);
  if (f.keywords?.length && chars > MAX_CONTEXT_CHARS)
    issues.push({
      error_type: 'invalid_length',
      location: 'keywords',
      message: `with the prompt must be at most ${MAX_CONTEXT_CHARS} characters together; got ${chars}`,
    });
  issues.push(...knownSpeakerIssues(f));
  if (issues.length) throw invalidFields(issues);
  return f;
}

/** The known speakers of checked fields, their clips decoded. */
export function knownSpeakersOf(f: TranscriptionFields): KnownSpeakerClip[] {
  const refs = f.known_speaker_references ?? [];
  return (f.known_speaker_names ?? []).map((name, i) => {
    const ref = refs[i]!;
    return { name: name.trim(), clip: Buffer.from(ref.slice(DATA_URL.exec(ref)![0].length), 'base64') };
  });
}
