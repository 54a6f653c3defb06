// Audio of a file, by file id, as an object URL the transcript view's <audio> plays. A file uploaded from this tab
// plays from the copy the browser holds; any other file is fetched once from GET /v1/files/{id}/content (an <audio>
// element cannot send the Authorization header itself, so the bytes come through an authenticated fetch).
import { request } from './api.js';

const urls = new Map<string, string>();
const loading = new Map<string, Promise<string>>();

export function rememberAudio(fileId: string, file: Blob): void {
  urls.set(fileId, URL.createObjectURL(file));
}

/** The file's audio as an object URL: the local copy if this tab has one, else downloaded (once per file). */
export function fileAudioUrl(fileId: string): Promise<string> {
  const local = urls.get(fileId);
  if (local) return Promise.resolve(local);
  let pending = loading.get(fileId);
  if (!pending) {
    pending = request(`/v1/files/${encodeURIComponent(fileId)}/content`)
      .then((res) => res.blob())
      .then((blob) => {
        const url = URL.createObjectURL(blob);
        urls.set(fileId, url);
        return url;
      })
      .finally(() => loading.delete(fileId));
    loading.set(fileId, pending);
  }
  return pending;
}
