// A transcription job's audio checks, as record-only failures (invalid_audio_file): what the probe finds, and the
// channel count a multichannel job needs.
import { AudioProbeError, probeAudioFile } from '../../audio/probe.js';
import type { AudioProbe } from '../../audio/probe-result.js';
import { MAX_CHANNELS } from './channels.js';
import { JobFailure } from './job-failure.js';

/** What the audio's check finds (its stated duration, its channels), or a record-only invalid_audio_file. */
export async function probeOf(file: string): Promise<AudioProbe> {
  try {
    return await probeAudioFile(file);
  } catch (err) {
    if (err instanceof AudioProbeError) throw new JobFailure('invalid_audio_file', `Invalid audio file: ${err.message}.`);
    throw err;
  }
}

/** The channels of a multichannel job's audio: two or more (at most MAX_CHANNELS), else invalid_audio_file. */
export function multichannelCount(probe: AudioProbe): number {
  const channels = probe.channels ?? 1;
  if (channels < 2)
    throw new JobFailure(
      'invalid_audio_file',
      'Invalid audio file: enable_multichannel needs audio with two or more channels; this audio has one channel. Send it without enable_multichannel.',
    );
  if (channels > MAX_CHANNELS)
    throw new JobFailure('invalid_audio_file', `Invalid audio file: it has ${channels} channels; enable_multichannel recognises at most ${MAX_CHANNELS}.`);
  return channels;
}
