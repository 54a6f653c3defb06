// Audio uploaded from this tab, by file id: the API has no download of a file's bytes, so the transcript view plays
// the copy the browser still holds (or the transcription's audio_url).
const urls = new Map<string, string>();

export function rememberAudio(fileId: string, file: Blob): void {
  urls.set(fileId, URL.createObjectURL(file));
}

export const localAudioUrl = (fileId: string | null): string | undefined => (fileId ? urls.get(fileId) : undefined);
