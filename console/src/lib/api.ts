// Talking to the Parlance API from the console. The API key typed at sign-in stays in session storage and is used
// for one thing only: minting a console session key (POST /v1/auth/playground-session), which every request then
// carries, so the server counts the console's actions as `playground`. An expired session is minted anew.

const KEY_ITEM = 'parlance.apiKey';
const SESSION_ITEM = 'parlance.session';
/** Mint a new session this long before the old one expires. */
const RENEW_MARGIN_MS = 60_000;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

interface Session {
  api_key: string;
  expires_at: string;
}

/** Fired on window when the stored API key stopped working. */
export const SIGNED_OUT_EVENT = 'parlance:signed-out';

export const signedIn = (): boolean => sessionStorage.getItem(KEY_ITEM) !== null;

export function signOut(): void {
  sessionStorage.removeItem(KEY_ITEM);
  sessionStorage.removeItem(SESSION_ITEM);
}

async function errorOf(res: Response): Promise<ApiError> {
  const body = (await res.json().catch(() => ({}))) as { error_type?: string; message?: string; error_message?: string };
  return new ApiError(res.status, body.error_type ?? 'http_error', body.message ?? body.error_message ?? `HTTP ${res.status}`);
}

async function mintSession(apiKey: string): Promise<Session> {
  const res = await fetch('/v1/auth/playground-session', { method: 'POST', headers: { authorization: `Bearer ${apiKey}` } });
  if (!res.ok) throw await errorOf(res);
  const session = (await res.json()) as Session;
  sessionStorage.setItem(SESSION_ITEM, JSON.stringify(session));
  return session;
}

/** Sign in: the key must open a session, else the error says why. */
export async function signIn(apiKey: string): Promise<void> {
  await mintSession(apiKey);
  sessionStorage.setItem(KEY_ITEM, apiKey);
}

/** The current console session key, minted anew near its expiry. */
export async function sessionKey(renew = false): Promise<string> {
  const stored = sessionStorage.getItem(SESSION_ITEM);
  const session = stored ? (JSON.parse(stored) as Session) : null;
  if (!renew && session && Date.parse(session.expires_at) - Date.now() > RENEW_MARGIN_MS) return session.api_key;
  const apiKey = sessionStorage.getItem(KEY_ITEM);
  if (!apiKey) throw new ApiError(401, 'unauthenticated', 'Signed out.');
  try {
    return (await mintSession(apiKey)).api_key;
  } catch (err) {
    // The API key itself was refused (revoked, project deleted): back to the sign-in form.
    if (err instanceof ApiError && err.status === 401) {
      signOut();
      dispatchEvent(new Event(SIGNED_OUT_EVENT));
    }
    throw err;
  }
}

export interface RequestOptions {
  method?: string;
  json?: unknown;
  body?: BodyInit;
  query?: Record<string, string | number | boolean | string[] | undefined | null>;
}

export function withQuery(path: string, query: RequestOptions['query']): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v === undefined || v === null || v === '') continue;
    if (Array.isArray(v)) v.forEach((item) => params.append(k, item));
    else params.set(k, String(v));
  }
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

/** A request with the session key; a 401 (session expired or revoked) is retried once with a fresh session. */
export async function request(path: string, opts: RequestOptions = {}): Promise<Response> {
  const send = async (key: string) => {
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    let body = opts.body;
    if (opts.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.json);
    }
    return fetch(withQuery(path, opts.query), { method: opts.method ?? 'GET', headers, body });
  };
  let res = await send(await sessionKey());
  if (res.status === 401) res = await send(await sessionKey(true));
  if (!res.ok) throw await errorOf(res);
  return res;
}

export async function api<T>(path: string, opts: RequestOptions = {}): Promise<T> {
  const res = await request(path, opts);
  return (res.status === 204 ? undefined : await res.json()) as T;
}

/** A short-lived single-use temporary key for one WebSocket session (minted by the console session: playground). */
export async function temporaryKey(usageType: 'transcribe_websocket' | 'tts_rt'): Promise<string> {
  const r = await api<{ api_key: string }>('/v1/auth/temporary-api-key', {
    method: 'POST',
    json: { usage_type: usageType, expires_in_seconds: 60, single_use: true, client_reference_id: 'console' },
  });
  return r.api_key;
}

export const wsUrl = (path: string): string => `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${path}`;

/** Upload with progress (fetch cannot report upload progress; XMLHttpRequest can). */
export async function upload<T>(path: string, form: FormData, onProgress: (fraction: number) => void): Promise<T> {
  const key = await sessionKey();
  return new Promise<T>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', path);
    xhr.setRequestHeader('authorization', `Bearer ${key}`);
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onload = () => {
      let body: { error_type?: string; message?: string } = {};
      try {
        body = JSON.parse(xhr.responseText) as typeof body;
      } catch {
        /* not JSON: the status says enough */
      }
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(1);
        resolve(body as T);
      } else reject(new ApiError(xhr.status, body.error_type ?? 'http_error', body.message ?? `HTTP ${xhr.status}`));
    };
    xhr.onerror = () => reject(new ApiError(0, 'network_error', 'The upload failed (network error).'));
    xhr.send(form);
  });
}

/** Save a Blob as a download. */
export function saveBlob(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export const errorText = (err: unknown): string =>
  err instanceof ApiError ? `${err.message} (${err.type})` : err instanceof Error ? err.message : String(err);
