// Which bytes of a stored object a GET asks for (RFC 9110 §14): the whole, one range, or none that exist. The
// header is parsed by `range-parser` (the parser Express and send use); what to do with the result is ours.
import parseRange from 'range-parser';

export type ByteRequest = { kind: 'full' } | { kind: 'partial'; start: number; end: number } | { kind: 'unsatisfiable' };

/**
 * A range whose last byte comes before its first is invalid, and answers 416 as the RFC advises. A malformed Range, a non-`bytes` unit, or an If-Range that does not match `etag` is ignored (the whole object,
 * as the RFC says). Several ranges are merged; if they stay apart, the whole object is sent (allowed by the RFC,
 * and no browser media element asks for more than one).
 */
export function byteRequest(size: number, range: string | undefined, ifRange: string | undefined, etag: string): ByteRequest {
  if (range === undefined || (ifRange !== undefined && ifRange !== etag)) return { kind: 'full' };
  // A suffix longer than the object means all of it (RFC 9110 §14.1.2); range-parser would call it unsatisfiable.
  const suffixesCut = range.replace(/([=,]\s*)-(\d+)/g, (whole, sep: string, n: string) => (Number(n) > size ? `${sep}-${size}` : whole));
  const parsed = parseRange(size, suffixesCut, { combine: true });
  if (parsed === -2 || (parsed !== -1 && parsed.type !== 'bytes')) return { kind: 'full' };
  if (parsed === -1 || size === 0) return { kind: 'unsatisfiable' };
  if (parsed.length !== 1) return { kind: 'full' };
  const { start, end } = parsed[0]!;
  return { kind: 'partial', start, end };
}
