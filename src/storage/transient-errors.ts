// Which database errors are passing: the connection failed, not the statement (a restart, a failover, a frozen or
// unreachable host). Work that met one should run again once the database is back, never be recorded as failed.
import { DatabaseTimeoutError } from './database.js';

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTDOWN',
  'EAI_AGAIN',
]);

// SQLSTATEs besides class 08 (connection_exception): admin_shutdown, crash_shutdown, cannot_connect_now (starting
// up, shutting down, in recovery), too_many_connections (everyone reconnecting after a failover), query_canceled
// (statement_timeout: a frozen or overloaded server).
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '57014']);

// pg's own errors carry no code: a connection lost mid-query, a client already broken, the pool's connect bounds.
const PG_MESSAGES =
  /^(Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|timeout exceeded when trying to connect|Query read timeout)/;

export function isTransientDatabaseError(err: unknown, depth = 0): boolean {
  if (depth > 4 || typeof err !== 'object' || err === null) return false;
  if (err instanceof DatabaseTimeoutError) return true;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
  if (typeof message === 'string' && PG_MESSAGES.test(message)) return true;
  // A connect to every address of a host name failing comes as one AggregateError.
  if (err instanceof AggregateError && err.errors.some((e) => isTransientDatabaseError(e, depth + 1))) return true;
  return isTransientDatabaseError((err as { cause?: unknown }).cause, depth + 1);
}
