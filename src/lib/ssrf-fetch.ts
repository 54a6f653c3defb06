// Outbound HTTP for URLs that callers give us (audio_url downloads, webhook targets), guarded against SSRF.
//
// How the guard works, per request and per redirect hop:
//   1. The URL must be http: or https: (an IP literal in any spelling is normalised by the WHATWG URL parser:
//      http://2130706433/ and http://0x7f.1/ both become 127.0.0.1 before we look at them).
//   2. The host is resolved once (dns.lookup, all addresses), and every address is classified by
//      `blockedReason` below; one blocked address blocks the request. A host listed by name in the allowlist
//      skips the classification; an address matching an allowlisted IP/CIDR is let through.
//   3. The socket is pinned to exactly the addresses that were checked (a custom `lookup` that returns them),
//      so a second DNS answer cannot move the connection elsewhere (DNS rebinding).
//   4. As a second, independent line, the connection goes through request-filtering-agent, which validates
//      the address the socket really connects to (IP literal at createConnection, resolved address inside
//      its lookup wrapper) against ipaddr.js's special ranges. Addresses our own policy deliberately lets
//      through (allowlisted, or NAT64/6to4 embedding a public IPv4) are handed to it as exact strings.
//      (Its CIDR allowlist is not used: ipaddr.js throws when an IPv6 address is matched against an IPv4
//      CIDR, and the agent turns that into a block, so a public IPv6 target would be refused whenever the
//      allowlist holds an IPv4 CIDR.)
//
// URL credentials (http://user:pass@host/) are allowed and sent as Basic auth (presigned or password-protected
// storage is a normal audio source). A relative redirect keeps them, as URL resolution does; an absolute Location
// uses only its own, so they never travel to another host. They are stripped from `finalUrl` and never appear in
// messages.
// Ports are not restricted. Error messages are written to be shown to the API client: they never name a local
// path or the address a host resolved to (that would let a caller map internal DNS); `detail` has that, for logs.
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import * as dns from 'node:dns';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import ipaddr from 'ipaddr.js';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';

/** Node's dns.lookup signature (as used by net.connect's `lookup` option). */
export type LookupFunction = net.LookupFunction;

/** The target is a private, loopback, link-local, metadata or otherwise reserved address (→ file_download_blocked). */
export class DownloadBlockedError extends Error {
  readonly code = 'file_download_blocked' as const;
  readonly retryable = false;
  readonly status: number | undefined = undefined;
  /** For server logs only (host and address); not for the client. */
  readonly detail: string;
  constructor(message: string, detail: string) {
    super(message);
    this.name = 'DownloadBlockedError';
    this.detail = detail;
  }
}

/** The fetch failed: bad scheme, DNS, TLS, connection, timeout, HTTP 4xx/5xx, size cap (→ file_download_failed). */
export class DownloadFailedError extends Error {
  readonly code = 'file_download_failed' as const;
  readonly retryable: boolean;
  /** HTTP status when the failure was an HTTP answer. */
  readonly status: number | undefined;
  /** True when the caller's AbortSignal stopped the download. */
  readonly aborted: boolean;
  /** For server logs only. */
  readonly detail: string | undefined;
  constructor(message: string, opts: { retryable: boolean; status?: number; aborted?: boolean; detail?: string; cause?: unknown }) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'DownloadFailedError';
    this.retryable = opts.retryable;
    this.status = opts.status;
    this.aborted = opts.aborted ?? false;
    this.detail = opts.detail;
  }
}

export const BLOCKED_MESSAGE = 'The URL points to a private or reserved network address; requests to it are blocked.';

// ---------------------------------------------------------------------------------------------------------------
// Address policy

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** A parsed allowPrivateHosts setting. */
export interface AllowList {
  hosts: ReadonlySet<string>;
  cidrs: readonly Cidr[];
}

function normaliseHostname(host: string): string {
  let h = host.toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.endsWith('.')) h = h.slice(0, -1);
  return h;
}

/** IPv4-mapped IPv6 (::ffff:a.b.c.d) is the IPv4 address for every purpose here. */
function unmap(addr: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() ? (addr as ipaddr.IPv6).toIPv4Address() : addr;
}

/**
 * Parses allowPrivateHosts entries: an IP (`127.0.0.1`, `::1`), a CIDR (`10.0.0.0/8`, `fd00::/8`) or a hostname
 * (`localhost`, matched exactly and case-insensitively against the URL's host). Throws TypeError on a malformed
 * CIDR, so a bad setting is loud rather than silently allowing nothing.
 */
export function parseAllowList(entries: readonly string[]): AllowList {
  const hosts = new Set<string>();
  const cidrs: Cidr[] = [];
  for (const raw of entries) {
    const entry = normaliseHostname(raw.trim());
    if (entry === '') continue;
    if (entry.includes('/')) {
      if (!ipaddr.isValidCIDR(entry)) throw new TypeError(`allowPrivateHosts: "${raw}" is not a valid CIDR`);
      const [addr, bits] = ipaddr.parseCIDR(entry);
      const un = unmap(addr);
      cidrs.push(un === addr ? [addr, bits] : [un, Math.max(0, bits - 96)]);
    } else if (net.isIP(entry) !== 0) {
      const addr = unmap(ipaddr.parse(entry));
      cidrs.push([addr, addr.kind() === 'ipv4' ? 32 : 128]);
    } else {
      hosts.add(entry);
    }
  }
  return { hosts, cidrs };
}

function allowlistedAddress(addr: ipaddr.IPv4 | ipaddr.IPv6, allow: AllowList): boolean {
  const a = unmap(addr);
  // match() throws across kinds, so only compare like with like.
  return allow.cidrs.some(([net_, bits]) => net_.kind() === a.kind() && a.match(net_, bits));
}

function v4FromParts(hi: number, lo: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
}

/**
 * Why an address is blocked, or null when it is an ordinary public unicast address. Ignores the allowlist.
 * IPv4: everything ipaddr.js does not call `unicast` (0/8, 10/8, 100.64/10, 127/8, 169.254/16, 172.16/12,
 * 192.0.0/24, documentation nets, 192.168/16, 198.18/15, multicast, 240/4, broadcast, ...).
 * IPv6: everything not `unicast` (::, ::1, fe80::/10, fc00::/7, ff00::/8, 2001:db8::/32, teredo, ...), plus the
 * deprecated IPv4-compatible ::/96; IPv4-mapped ::ffff:0:0/96 is judged by its IPv4 address; NAT64
 * 64:ff9b::/96 and 6to4 2002::/16 are judged by the IPv4 address they embed (local-use NAT64 64:ff9b:1::/48 is
 * blocked outright).
 */
export function blockedReason(address: string): string | null {
  if (net.isIP(address) === 0) return 'not an IP address';
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') {
    const range = (parsed as ipaddr.IPv4).range();
    return range === 'unicast' ? null : range;
  }
  const v6 = parsed as ipaddr.IPv6;
  const p = v6.parts;
  if (v6.isIPv4MappedAddress()) {
    const inner = blockedReason(v6.toIPv4Address().toString());
    return inner === null ? null : `ipv4Mapped(${inner})`;
  }
  const range = v6.range();
  if (range === 'rfc6052') {
    // Well-known NAT64 prefix 64:ff9b::/96 carries the IPv4 address in the last 32 bits.
    if (p[0] === 0x64 && p[1] === 0xff9b && p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0) {
      const inner = blockedReason(v4FromParts(p[6] ?? 0, p[7] ?? 0).toString());
      return inner === null ? null : `nat64(${inner})`;
    }
    return 'nat64LocalUse';
  }
  if (range === '6to4') {
    const inner = blockedReason(v4FromParts(p[1] ?? 0, p[2] ?? 0).toString());
    return inner === null ? null : `6to4(${inner})`;
  }
  if (range !== 'unicast') return range;
  // ::/96 (IPv4-compatible, deprecated) is "unicast" to ipaddr.js but is no public address.
  if (p.slice(0, 6).every((x) => x === 0)) return 'ipv4Compatible';
  return null;
}

/** True when a request to this address must be refused, taking the allowlist into account. */
export function isBlockedAddress(address: string, allow: AllowList): boolean {
  if (net.isIP(address) === 0) return true;
  if (allowlistedAddress(ipaddr.parse(address), allow)) return false;
  return blockedReason(address) !== null;
}

// ---------------------------------------------------------------------------------------------------------------
// One guarded request (no redirect following)

interface Target {
  /** Host as given to net.connect: hostname, or IP literal without brackets. */
  connectHost: string;
  /** Checked addresses the socket is pinned to (empty for an IP literal, which needs no lookup). */
  addresses: dns.LookupAddress[];
  agent: http.Agent;
}

function lookupAll(lookup: LookupFunction, host: string, signal: AbortSignal): Promise<dns.LookupAddress[]> {
  return new Promise((resolve, reject) => {
    // getaddrinfo cannot be cancelled; stop waiting for it instead.
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      lookup(host, { all: true, family: 0 }, (err, result) => {
        signal.removeEventListener('abort', onAbort);
        if (err) return reject(err);
        if (typeof result === 'string') return resolve([{ address: result, family: net.isIP(result) }]);
        resolve(result);
      });
    } catch (err) {
      signal.removeEventListener('abort', onAbort);
      reject(err);
    }
  });
}

function pinnedLookup(addresses: dns.LookupAddress[]): LookupFunction {
  return (hostname, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : (options.family ?? 0);
    const usable = family === 0 ? addresses : addresses.filter((a) => a.family === family);
    const first = usable[0];
    if (!first) {
      const err: NodeJS.ErrnoException = new Error(`no address of family ${family} for ${hostname}`);
      err.code = 'ENOTFOUND';
      process.nextTick(() => callback(err, '', 0));
      return;
    }
    if (options.all) process.nextTick(() => callback(null, usable));
    else process.nextTick(() => callback(null, first.address, first.family));
  };
}

async function prepareTarget(url: URL, allow: AllowList, lookup: LookupFunction, signal: AbortSignal): Promise<Target> {
  const host = normaliseHostname(url.hostname);
  const https_ = url.protocol === 'https:';
  if (host === '') throw new DownloadFailedError('The URL has no host.', { retryable: false });
  const hostAllowed = allow.hosts.has(host);
  let addresses: dns.LookupAddress[];
  const literal = net.isIP(host) !== 0;
  if (literal) {
    addresses = [{ address: host, family: net.isIP(host) }];
  } else {
    try {
      addresses = await lookupAll(lookup, host, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      const notFound = code === 'ENOTFOUND' || code === 'EAI_NONAME' || code === 'ENODATA';
      throw new DownloadFailedError(`Could not resolve host "${host}".`, { retryable: !notFound, detail: String(code ?? err), cause: err });
    }
    if (addresses.length === 0) throw new DownloadFailedError(`Could not resolve host "${host}".`, { retryable: false });
  }
  // Exact addresses our policy approves although the agent's own rule (anything not "unicast") would refuse.
  const agentAllow: string[] = [];
  if (!hostAllowed) {
    for (const { address } of addresses) {
      if (isBlockedAddress(address, allow)) {
        throw new DownloadBlockedError(BLOCKED_MESSAGE, `host ${host} -> ${address} (${blockedReason(address) ?? 'allowlist'})`);
      }
      if (net.isIP(address) !== 0 && ipaddr.parse(address).range() !== 'unicast') agentAllow.push(address);
    }
  }
  const agentOptions = { keepAlive: false };
  let agent: http.Agent;
  if (hostAllowed) agent = https_ ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
  else if (https_) agent = new RequestFilteringHttpsAgent({ ...agentOptions, allowIPAddressList: agentAllow });
  else agent = new RequestFilteringHttpAgent({ ...agentOptions, allowIPAddressList: agentAllow });
  return { connectHost: host, addresses: literal ? [] : addresses, agent };
}

export interface GuardedRequestOptions {
  method: string;
  headers: Record<string, string>;
  body?: Buffer;
  allowList: AllowList;
  lookup?: LookupFunction;
  /** Aborting it destroys the request (the caller owns timeouts). */
  signal: AbortSignal;
  /** Socket inactivity limit; when hit, the request is destroyed with an IdleTimeoutError and onIdleTimeout runs. */
  idleTimeoutMs?: number;
  onIdleTimeout?: () => void;
}

/** Raised (internally) when the socket saw no traffic for idleTimeoutMs. */
export class IdleTimeoutError extends Error {
  constructor(readonly idleMs: number) {
    super(`no data for ${idleMs} ms`);
    this.name = 'IdleTimeoutError';
  }
}

export interface GuardedResponse {
  response: http.IncomingMessage;
  /** Destroys the request and the per-request agent. Safe to call more than once. */
  close(): void;
}

/**
 * Sends one request through the SSRF guard (scheme check, resolve-and-check, pinned connection, filtering agent).
 * Does not follow redirects. Throws DownloadBlockedError / DownloadFailedError for policy failures; network errors
 * are rejected as they come (map them with `describeNetworkError`).
 */
export async function guardedRequest(url: URL, opts: GuardedRequestOptions): Promise<GuardedResponse> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new DownloadFailedError(`URL scheme "${url.protocol}" is not supported; only http and https URLs can be fetched.`, { retryable: false });
  }
  const target = await prepareTarget(url, opts.allowList, opts.lookup ?? (dns.lookup as LookupFunction), opts.signal);
  const requestOptions: https.RequestOptions = {
    protocol: url.protocol,
    host: target.connectHost,
    port: url.port === '' ? undefined : Number(url.port),
    path: `${url.pathname}${url.search}`,
    method: opts.method,
    headers: opts.headers,
    agent: target.agent,
    signal: opts.signal,
  };
  if (target.addresses.length > 0) requestOptions.lookup = pinnedLookup(target.addresses);
  if (url.username !== '' || url.password !== '') {
    requestOptions.auth = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  }
  return new Promise<GuardedResponse>((resolve, reject) => {
    let req: http.ClientRequest;
    try {
      req = (url.protocol === 'https:' ? https : http).request(requestOptions);
    } catch (err) {
      target.agent.destroy();
      reject(err);
      return;
    }
    const close = () => {
      req.destroy();
      target.agent.destroy();
    };
    if (opts.idleTimeoutMs !== undefined) {
      const idle = opts.idleTimeoutMs;
      req.setTimeout(idle, () => {
        opts.onIdleTimeout?.();
        req.destroy(new IdleTimeoutError(idle));
      });
    }
    // `on`, not `once`: a destroyed request may report more than one error, and an unheard one would crash.
    req.on('error', (err) => {
      close();
      reject(err);
    });
    req.once('response', (response) => resolve({ response, close }));
    req.end(opts.body);
  });
}

const RETRYABLE_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'ENETUNREACH', 'EHOSTUNREACH', 'ENETDOWN', 'EHOSTDOWN', 'EAI_AGAIN', 'UND_ERR_SOCKET']);

/** True for errors raised by request-filtering-agent's own check (our second line). */
function isAgentBlock(err: unknown): boolean {
  return err instanceof Error && /^DNS lookup .* is not allowed\./.test(err.message);
}

/**
 * Turns an error from guardedRequest / the response stream into a DownloadBlockedError or DownloadFailedError.
 * `timedOut` and `aborted` say whether the caller's overall timer or the caller's own signal fired.
 */
export function describeNetworkError(
  err: unknown,
  ctx: { timedOut: boolean; aborted: boolean; timeoutMs: number; idleMs?: number | undefined },
): DownloadBlockedError | DownloadFailedError {
  if (err instanceof DownloadBlockedError || err instanceof DownloadFailedError) return err;
  if (isAgentBlock(err)) return new DownloadBlockedError(BLOCKED_MESSAGE, (err as Error).message);
  if (ctx.aborted) return new DownloadFailedError('The request was cancelled.', { retryable: false, aborted: true, cause: err });
  if (ctx.timedOut) return new DownloadFailedError(`The request timed out after ${ctx.timeoutMs} ms.`, { retryable: true, cause: err });
  if (err instanceof IdleTimeoutError) return new DownloadFailedError(`No data was received for ${err.idleMs} ms.`, { retryable: true, cause: err });
  if (ctx.idleMs !== undefined) return new DownloadFailedError(`No data was received for ${ctx.idleMs} ms.`, { retryable: true, cause: err });
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? '';
  const detail = err instanceof Error ? err.message : String(err);
  if (code === 'ECONNREFUSED') return new DownloadFailedError('The connection was refused.', { retryable: true, detail, cause: err });
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNABORTED' || code === 'ERR_STREAM_PREMATURE_CLOSE') {
    return new DownloadFailedError('The connection was closed unexpectedly.', { retryable: true, detail, cause: err });
  }
  if (code === 'ENOTFOUND' || code === 'EAI_NONAME') return new DownloadFailedError('Could not resolve the host.', { retryable: false, detail, cause: err });
  if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY|HOSTNAME/i.test(code)) {
    return new DownloadFailedError(`TLS error (${code}).`, { retryable: false, detail, cause: err });
  }
  if (code.startsWith('HPE_')) return new DownloadFailedError('The server sent a malformed HTTP response.', { retryable: true, detail, cause: err });
  if (RETRYABLE_CODES.has(code)) return new DownloadFailedError(`Network error (${code}).`, { retryable: true, detail, cause: err });
  return new DownloadFailedError(code ? `Network error (${code}).` : 'Network error.', { retryable: true, detail, cause: err });
}

/** Per-request timer + caller signal, merged into one AbortSignal with a record of which fired. */
export function attemptController(timeoutMs: number, outer?: AbortSignal): { signal: AbortSignal; state: { timedOut: boolean; aborted: boolean }; dispose(): void } {
  const controller = new AbortController();
  const state = { timedOut: false, aborted: false };
  const timer = setTimeout(() => {
    state.timedOut = true;
    controller.abort(new Error(`timed out after ${timeoutMs} ms`));
  }, timeoutMs);
  const onOuter = () => {
    state.aborted = true;
    controller.abort(outer?.reason);
  };
  if (outer?.aborted) onOuter();
  else outer?.addEventListener('abort', onOuter, { once: true });
  return {
    signal: controller.signal,
    state,
    dispose() {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onOuter);
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Downloads

export interface DownloadOptions {
  /** Hosts, IPs or CIDRs that bypass the private-address block (the allowPrivateHosts setting). */
  allowPrivateHosts: readonly string[];
  /** Largest body accepted, in bytes; a larger Content-Length or a longer body fails the download. */
  maxBytes: number;
  /** Deadline for one attempt (DNS, connect, every redirect hop and the whole body). */
  timeoutMs: number;
  /** Longest silence on the socket (default min(timeoutMs, 30 s)). */
  idleTimeoutMs?: number;
  /** Redirects followed (default 5). */
  maxRedirects?: number;
  /** Extra attempts after a transient failure (5xx, reset, refused, timeout, EAI_AGAIN). Default 2. */
  retries?: number;
  /** Delay before retry n (0-based) is retryDelayMs * 2^n. Default 500. */
  retryDelayMs?: number;
  signal?: AbortSignal;
  /** DNS lookup (node dns.lookup signature); tests map names to loopback with it. */
  lookup?: LookupFunction;
}

export interface DownloadResult {
  bytes: number;
  contentType: string | null;
  /** URL of the last hop, without credentials. */
  finalUrl: string;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const USER_AGENT = 'Parlance/1 (audio_url fetch)';

function withoutCredentials(url: URL): string {
  if (url.username === '' && url.password === '') return url.href;
  const copy = new URL(url.href);
  copy.username = '';
  copy.password = '';
  return copy.href;
}

class ByteLimit extends Transform {
  bytes = 0;
  constructor(private readonly max: number) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.max) cb(tooLarge(this.max));
    else cb(null, chunk);
  }
}

function tooLarge(max: number): DownloadFailedError {
  return new DownloadFailedError(`The file is larger than ${max} bytes.`, { retryable: false });
}

/** Marks errors of the destination file (disk full, permissions): internal, not a download failure. */
class LocalWriteError extends Error {
  constructor(readonly original: unknown) {
    super('local write failed');
  }
}

async function attemptDownload(startUrl: string, destPath: string, opts: DownloadOptions, allow: AllowList): Promise<DownloadResult> {
  const timeoutMs = opts.timeoutMs;
  const ctl = attemptController(timeoutMs, opts.signal);
  const maxRedirects = opts.maxRedirects ?? 5;
  let current: URL;
  try {
    current = new URL(startUrl);
  } catch {
    ctl.dispose();
    throw new DownloadFailedError('The URL is not valid.', { retryable: false });
  }
  const idleTimeoutMs = opts.idleTimeoutMs ?? Math.min(timeoutMs, 30_000);
  let idleFired = false;
  let open: GuardedResponse | undefined;
  try {
    for (let hop = 0; ; hop++) {
      open = await guardedRequest(current, {
        method: 'GET',
        headers: { 'user-agent': USER_AGENT, accept: '*/*', 'accept-encoding': 'identity' },
        allowList: allow,
        lookup: opts.lookup,
        signal: ctl.signal,
        idleTimeoutMs,
        onIdleTimeout: () => (idleFired = true),
      });
      const res = open.response;
      const status = res.statusCode ?? 0;
      if (REDIRECT_STATUSES.has(status) && res.headers.location !== undefined) {
        const location = res.headers.location;
        open.close();
        open = undefined;
        if (hop >= maxRedirects) throw new DownloadFailedError(`Too many redirects (more than ${maxRedirects}).`, { retryable: false });
        try {
          current = new URL(location, current);
        } catch {
          throw new DownloadFailedError('The server redirected to an invalid URL.', { retryable: false });
        }
        continue;
      }
      if (status < 200 || status >= 300) {
        throw new DownloadFailedError(`The server answered HTTP ${status}.`, { retryable: status >= 500, status });
      }
      const announced = res.headers['content-length'];
      if (announced !== undefined && /^\d+$/.test(announced) && Number(announced) > opts.maxBytes) throw tooLarge(opts.maxBytes);
      const limit = new ByteLimit(opts.maxBytes);
      const file = createWriteStream(destPath, { flags: 'w' });
      // pipeline() hands the first error to every stream, so only an error the file raised before any other
      // stream failed is a local write failure.
      let upstreamFailed = false;
      let writeError: unknown;
      res.once('error', () => (upstreamFailed = true));
      limit.once('error', () => (upstreamFailed = true));
      file.once('error', (err) => {
        if (!upstreamFailed) writeError = err;
      });
      try {
        await pipeline(res, limit, file);
      } catch (err) {
        if (writeError !== undefined && err === writeError) throw new LocalWriteError(writeError);
        throw err;
      }
      const contentType = res.headers['content-type'] ?? null;
      return { bytes: limit.bytes, contentType, finalUrl: withoutCredentials(current) };
    }
  } catch (err) {
    if (err instanceof LocalWriteError) throw err;
    throw describeNetworkError(err, { ...ctl.state, timeoutMs, idleMs: idleFired ? idleTimeoutMs : undefined });
  } finally {
    open?.close();
    ctl.dispose();
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Downloads `url` to `destPath` through the SSRF guard, streaming to disk. On failure the (partial) file is
 * removed and a DownloadBlockedError or DownloadFailedError is thrown; an error writing the local file (disk full,
 * permissions) is rethrown as it is, since it is a server fault and not the URL's.
 * Transient failures (5xx, connection refused/reset, timeouts, EAI_AGAIN) are retried `retries` times; 4xx,
 * ENOTFOUND, TLS errors, size cap, bad scheme, too many redirects and blocked targets are not.
 */
export async function downloadToFile(url: string, destPath: string, opts: DownloadOptions): Promise<DownloadResult> {
  const allow = parseAllowList(opts.allowPrivateHosts);
  const retries = opts.retries ?? 2;
  const baseDelay = opts.retryDelayMs ?? 500;
  for (let attempt = 0; ; attempt++) {
    try {
      return await attemptDownload(url, destPath, opts, allow);
    } catch (err) {
      await rm(destPath, { force: true });
      if (err instanceof LocalWriteError) throw err.original;
      const failure = err as DownloadBlockedError | DownloadFailedError;
      if (!failure.retryable || attempt >= retries || opts.signal?.aborted) throw failure;
      await sleep(baseDelay * 2 ** attempt, opts.signal);
      if (opts.signal?.aborted) throw new DownloadFailedError('The request was cancelled.', { retryable: false, aborted: true });
    }
  }
}
