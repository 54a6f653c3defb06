import { describe, expect, it } from 'vitest';
import { DatabaseTimeoutError } from './database.js';
import { isTransientDatabaseError } from './transient-errors.js';

const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isTransientDatabaseError', () => {
  it('knows the errors of a database restarting, failing over, frozen or unreachable', () => {
    for (const err of [
      coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'),
      coded('ECONNRESET', 'read ECONNRESET'),
      coded('57P01', 'terminating connection due to administrator command'),
      coded('57P02'),
      coded('57P03', 'the database system is starting up'),
      coded('08006', 'connection failure'),
      coded('08P01'),
      coded('53300', 'sorry, too many clients already'),
      coded('57014', 'canceling statement due to statement timeout'),
      new Error('Connection terminated unexpectedly'),
      new Error('Connection terminated due to connection timeout'),
      new Error('Client has encountered a connection error and is not queryable'),
      new Error('timeout exceeded when trying to connect'),
      new Error('Query read timeout'),
      new DatabaseTimeoutError(11_000),
      new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')], ''),
      new Error('could not record', { cause: coded('57P01') }),
    ])
      expect(isTransientDatabaseError(err), String(err)).toBe(true);
  });

  it('leaves alone errors of the statement or the data, and what is not an error', () => {
    for (const err of [
      coded('23505', 'duplicate key value violates unique constraint'),
      coded('42P01', 'relation "nope" does not exist'),
      coded('SQLITE_CONSTRAINT'),
      coded('ENOENT'),
      new Error('something else'),
      new TypeError('Cannot read properties of undefined'),
      'ECONNREFUSED',
      null,
      undefined,
    ])
      expect(isTransientDatabaseError(err), String(err)).toBe(false);
  });
});
