// One request through the SSRF guard, without following redirects: the host resolved once and every address
// checked (address-policy.ts), the socket pinned to the checked addresses (no DNS rebinding), and
// request-filtering-agent as a second, independent check of the address really connected to.
import * as dns from 'node:dns';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import ipaddr from 'ipaddr.js';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import { type AllowList, blockedReason, isBlockedAddress, normaliseHostname } from './address-policy.js';
import { BLOCKED_MESSAGE, DownloadBlockedError, DownloadFailedError } from './errors.js';

/** Node's dns.lookup signature (as used by net.connect's `lookup` option). */
export type LookupFunction = net.LookupFunction;

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
