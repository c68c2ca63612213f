import { isDatabaseUnreachable } from '../src/connection-errors';

describe('isDatabaseUnreachable', () => {
  it.each([
    ['a socket code', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    [
      'an administrator shutdown',
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
    ],
    ['a connection-class SQLSTATE', Object.assign(new Error('connection failure'), { code: '08006' })],
    ["node-postgres's codeless message", new Error('Connection terminated unexpectedly')],
    [
      'the same message behind the SQL knex puts first',
      new Error('select "id" from "storage_users" where "username" = $1 - Connection terminated unexpectedly'),
    ],
    ['a client that lost its connection', new Error('Client has encountered a connection error and is not queryable')],
    ['a connection that ended while connecting', new Error('Connection ended unexpectedly')],
  ])('when the error is %s, then it means the database could not be reached', (_what, err) => {
    expect(isDatabaseUnreachable(err)).toBe(true);
  });

  it.each([
    ['a missing table', Object.assign(new Error('relation "nope" does not exist'), { code: '42P01' })],
    [
      'a unique violation',
      Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' }),
    ],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
  ])('when the error is %s, then it is not a connection failure', (_what, err) => {
    expect(isDatabaseUnreachable(err)).toBe(false);
  });
});
