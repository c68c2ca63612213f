import { CairnError } from '@cairn/domain';
import { translateDbError } from '../../src/db/errors';

const codeOf = (e: unknown) => (e instanceof CairnError ? e.code : 'untranslated');

describe('translateDbError', () => {
  it.each([
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    [
      'an administrator shutdown',
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
    ],
    ['a connection-class SQLSTATE', Object.assign(new Error('connection failure'), { code: '08006' })],
    ['a dropped connection behind the SQL', new Error('insert into "clusters" … - Connection terminated unexpectedly')],
    [
      "knex's pool timeout",
      Object.assign(new Error('Knex: Timeout acquiring a connection. The pool is probably full.'), {
        name: 'KnexTimeoutError',
      }),
    ],
  ])('when the error is %s, then it becomes UNAVAILABLE (503)', (_what, err) => {
    expect(codeOf(translateDbError(err))).toBe('UNAVAILABLE');
  });

  it.each([
    ['a unique violation', Object.assign(new Error('duplicate key'), { code: '23505' }), 'ALREADY_EXISTS'],
    [
      'a foreign key violation',
      Object.assign(new Error('violates foreign key constraint'), { code: '23503' }),
      'IN_USE',
    ],
    [
      'a RESTRICT foreign key violation',
      Object.assign(new Error('violates RESTRICT setting of foreign key constraint'), { code: '23001' }),
      'IN_USE',
    ],
    ['a bad value', Object.assign(new Error('invalid input syntax'), { code: '22P02' }), 'INVALID_INPUT'],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')"), 'untranslated'],
  ])('when the error is %s, then it is not called a connection failure', (_what, err, expected) => {
    expect(codeOf(translateDbError(err))).toBe(expected);
  });
});
