// URLs with credentials in them (`https://user:secret@host/a.wav`, presigned-style tokens as the user name) are kept
// as given for the download and the webhook call, and shown everywhere else with the credentials masked.

const MASK = '****';

/** The URL with any user name and password replaced by ****; anything that is not an absolute URL unchanged. */
export function maskUrlCredentials(url: string): string;
export function maskUrlCredentials(url: string | null): string | null;
export function maskUrlCredentials(url: string | null): string | null {
  if (url === null) return null;
  // Only the authority is rewritten, so the rest of the URL reads exactly as the client sent it.
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)@/i.exec(url);
  if (!m) return url;
  const userinfo = m[2]!;
  const masked = userinfo.includes(':') ? `${MASK}:${MASK}` : MASK;
  return `${m[1]}${masked}@${url.slice(m[0].length)}`;
}
