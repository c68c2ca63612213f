import request from 'supertest';
import { Cluster } from 'ioredis';
import { describeTokenCapSuite } from '../gateway/token-cap-suite';
import { describeTokenSuite } from '../gateway/token-suite';
import { startStack, type Stack } from '../support/stack';
import { command, startRedisCluster, type RedisTopology } from './redis-servers';

/**
 * The gateway on a real 6-node Redis Cluster (3 masters, 3 replicas) on 127.0.0.1:7101-7106:
 * the whole token suite, then what only a Cluster can show.
 */
const PORTS = [7101, 7102, 7103, 7104, 7105, 7106];
const PW = 'cluster-password-0123456789';

let cluster: RedisTopology | undefined;
beforeAll(async () => {
  cluster = await startRedisCluster(PORTS);
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

describeTokenSuite('Postgres + Redis Cluster (redis+cluster://)', () => ({
  database: 'postgres',
  redis: true,
  redisUrl: cluster!.url,
}));
describeTokenCapSuite('Postgres + Redis Cluster (redis+cluster://)', () => ({
  database: 'postgres',
  redis: true,
  redisUrl: cluster!.url,
}));

describe('auth-gateway on a Redis Cluster', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ database: 'postgres', redis: true, redisUrl: cluster!.url });
    await stack.createUser('dave', PW);
  });
  afterAll(() => stack?.close());

  const login = () => request(stack.gatewayUrl).get('/auth/v1.0').set('X-Auth-User', 'dave').set('X-Auth-Key', PW);

  it('when REDIS_URL is redis+cluster://, then the gateway holds an ioredis Cluster that answers PING', async () => {
    expect(stack.gatewayDeps.redis).toBeInstanceOf(Cluster);
    expect(await stack.gatewayDeps.redis!.ping()).toBe('PONG');
  });

  it('when many tokens are issued, then their records spread over every master (no hash tag pins a cluster to one slot)', async () => {
    const masters = (
      await Promise.all(PORTS.map(async (p) => (((await command(p, 'ROLE')) as string[])[0] === 'master' ? p : null)))
    ).filter((p) => p !== null);
    expect(masters).toHaveLength(3);
    const before = await Promise.all(masters.map((p) => command(p, 'DBSIZE') as Promise<number>));
    // V3: every login a new token (a V1 login is handed the live one again).
    const v3 = () =>
      request(stack.gatewayUrl)
        .post('/auth/v3/auth/tokens')
        .send({
          auth: {
            identity: {
              methods: ['password'],
              password: { user: { name: 'dave', domain: { id: 'default' }, password: PW } },
            },
          },
        });
    for (let i = 0; i < 30; i++) expect((await v3()).status).toBe(201);
    const after = await Promise.all(masters.map((p) => command(p, 'DBSIZE') as Promise<number>));
    for (let i = 0; i < masters.length; i++) expect(after[i]! - before[i]!).toBeGreaterThan(0);
  });

  it('when every node of the Cluster is gone, then logins fail fast with 503 (bounded retries), not hang', async () => {
    expect((await login()).status).toBe(200);
    await cluster!.stop();
    const started = Date.now();
    const res = await login();
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(Date.now() - started).toBeLessThan(15_000);
  }, 30_000);
});
