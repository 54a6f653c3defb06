// What an upload check finds out about a stored audio file, whichever check ran (ffprobe in probe.ts, or a WAV's
// header in wav-probe.ts).
export interface AudioProbe {
  format: string;
  durationMs: number | null;
  codec: string;
  sampleRate: number | null;
  channels: number | null;
}
