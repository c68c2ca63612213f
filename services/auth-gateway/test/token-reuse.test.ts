import { randomBytes, randomUUID } from 'node:crypto';
import type { UserDirectory, UserRecord } from '../src/credentials/users';
import { closeRedis, type RedisClient } from '../src/redis';
import { RedisTokenStore } from '../src/tokens/redis-store';
import { TokenService, type IssueRequest } from '../src/tokens/service';
import { testRedis } from './support/redis';

/**
 * Two replicas' token services on one Redis: each remembers the token it last saw handed out for a
 * V1 login, and must follow what Redis holds when the other replica has put another one there.
 */
describe('V1 token reuse across replicas', () => {
  let redis: RedisClient;
  let prefix: string;
  const user: UserRecord = {
    id: '42',
    username: 'alice',
    passwordHash: 'unused',
    enabled: true,
    isSuperuser: false,
    generation: '1',
  };
  const login: IssueRequest = { user, project: 'alice', methods: ['password'], userDomain: 'default', reuse: true };
  const replica = (store: RedisTokenStore, key: string, uuid: string) =>
    new TokenService(store, {} as UserDirectory, key, uuid, { lifetimeSeconds: 3600, perUser: 4, reuseV1: true });

  beforeAll(() => {
    redis = testRedis();
  });
  beforeEach(() => {
    prefix = `cairn:test-reuse-${randomBytes(6).toString('hex')}:`;
  });
  afterEach(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
  });
  afterAll(() => closeRedis(redis));

  it('when the other replica replaced the token this one handed out, then this one hands out the other’s, and each is the same text', async () => {
    const store = new RedisTokenStore(redis, prefix);
    const [key, uuid] = [randomBytes(32).toString('hex'), randomUUID()];
    const a = replica(store, key, uuid);
    const b = replica(store, key, uuid);
    const first = await a.issue(login);
    expect((await a.issue(login)).id).toBe(first.id);
    expect((await b.issue(login)).id).toBe(first.id);

    expect(await a.revoke(first.id)).toBe(true);
    const second = await b.issue(login);
    expect(second.id).not.toBe(first.id);
    // a still remembers the first token: it must see that Redis holds another, and hand that out.
    expect((await a.issue(login)).id).toBe(second.id);
    expect((await a.issue(login)).id).toBe(second.id);
  });

  it('when the remembered token is still there but revoked for its user, then a new one is handed out', async () => {
    const store = new RedisTokenStore(redis, prefix);
    const a = replica(store, randomBytes(32).toString('hex'), randomUUID());
    const first = await a.issue(login);
    expect((await a.issue(login)).id).toBe(first.id);
    await new Promise((r) => setTimeout(r, 5));
    await a.revokeUser(user);
    // A token issued in the revocation's millisecond would count as revoked too.
    await new Promise((r) => setTimeout(r, 5));
    const second = await a.issue(login);
    expect(second.id).not.toBe(first.id);
    expect((await a.issue(login)).id).toBe(second.id);
  });
});
