// Outbound HTTP for URLs that callers give us (audio_url downloads, webhook targets), guarded against SSRF. This file
// is the guard's public surface; the parts live in src/lib/ssrf/ (errors, address-policy, pinned-request, failures,
// download).
//
// How the guard works, per request and per redirect hop:
//   1. The URL must be http: or https: (an IP literal in any spelling is normalised by the WHATWG URL parser:
//      http://2130706433/ and http://0x7f.1/ both become 127.0.0.1 before we look at them).
//   2. The host is resolved once (dns.lookup, all addresses), and every address is classified by
//      `blockedReason` (ssrf/address-policy.ts); one blocked address blocks the request. A host listed by name in the allowlist
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
export { type AllowList, blockedReason, isBlockedAddress, parseAllowList } from './ssrf/address-policy.js';
export { type DownloadOptions, type DownloadResult, downloadToFile } from './ssrf/download.js';
export { BLOCKED_MESSAGE, DownloadBlockedError, DownloadFailedError } from './ssrf/errors.js';
export { attemptController, describeNetworkError } from './ssrf/failures.js';
export { guardedRequest, type GuardedRequestOptions, type GuardedResponse, IdleTimeoutError, type LookupFunction } from './ssrf/pinned-request.js';
