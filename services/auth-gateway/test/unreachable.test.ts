import { createServer } from 'node:net';
import { isCairnError } from '@cairn/domain';
import knex, { type Knex } from 'knex';
import { UserDirectory } from '../src/credentials/users';
import { createRedis, closeRedis } from '../src/redis';
import { RedisTokenStore } from '../src/tokens/redis-store';
import pino from 'pino';
import { testRedis } from './support/redis';

/** A port nothing listens on: bound once, then released. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const codeOf = (err: unknown) => (isCairnError(err) ? err.code : 'not a CairnError');

describe('dependency failures become typed errors at the data edge', () => {
  const dbs: Knex[] = [];
  afterAll(async () => {
    await Promise.all(dbs.map((db) => db.destroy()));
  });
  const database = (url: string) => {
    const db = knex({
      client: 'pg',
      connection: url,
      pool: { min: 0, max: 1 },
      acquireConnectionTimeout: 2_000,
      log: { warn: () => undefined, error: () => undefined, debug: () => undefined, deprecate: () => undefined },
    });
    dbs.push(db);
    return db;
  };

  it('when Postgres cannot be reached, then a user lookup fails with UNAVAILABLE', async () => {
    const users = new UserDirectory(database(`postgres://postgres@127.0.0.1:${await freePort()}/postgres`), 1, 0);
    expect(codeOf(await users.find('alice').catch((e: unknown) => e))).toBe('UNAVAILABLE');
  });

  it('when Postgres answers with an error of its own (no such table), then it is not called unavailable', async () => {
    // The maintenance database has no Cairn schema: the query reaches Postgres and is refused (42P01).
    const users = new UserDirectory(database('postgres://postgres@127.0.0.1:5432/postgres'), 1, 0);
    const err = (await users.find('alice').catch((e: unknown) => e)) as { code?: string };
    expect(isCairnError(err)).toBe(false);
    expect(err.code).toBe('42P01');
  });

  it('when Redis cannot be reached, then a token lookup fails with UNAVAILABLE', async () => {
    const redis = createRedis(`redis://127.0.0.1:${await freePort()}`, pino({ level: 'silent' }));
    try {
      const store = new RedisTokenStore(redis, 'cairn:test-unreachable:');
      expect(codeOf(await store.get('x').catch((e: unknown) => e))).toBe('UNAVAILABLE');
    } finally {
      await closeRedis(redis);
    }
  }, 20_000);

  it('when Redis refuses a command itself (wrong type), then it is not called unavailable', async () => {
    const redis = testRedis();
    const prefix = `cairn:test-unreachable-${process.pid}:`;
    try {
      // A list where a string is expected: Redis answers WRONGTYPE.
      await redis.lpush(`${prefix}kv:list`, 'a');
      const store = new RedisTokenStore(redis, prefix);
      const err = await store.getOrSet('list', 'b').catch((e: unknown) => e);
      expect(isCairnError(err)).toBe(false);
      expect(String((err as Error).message)).toMatch(/WRONGTYPE/);
    } finally {
      await redis.del(`${prefix}kv:list`);
      await closeRedis(redis);
    }
  });
});
