import request from 'supertest';
import { startStack, type Stack } from '../support/stack';
import type { TokenSuiteBackend } from './token-suite';

const PW = 'capped-password-0123456789';
const NEW_PW = 'capped-password-changed-0123';
const SERVICE_PW = 'service-password-0123456789';
const CAP = 5;

/**
 * How many live tokens one user may hold (CAIRN_TOKENS_PER_USER) and V1's reuse of a live token,
 * end to end. tokens.test.ts runs it on Redis and on the in-process store; test-e2e/scale on a
 * Redis Cluster.
 */
export function describeTokenCapSuite(name: string, backend: TokenSuiteBackend): void {
  describe(`live tokens per user on ${name}`, () => {
    let stack: Stack;
    let serviceToken: string;
    const gw = () => request(stack.gatewayUrl);
    const v1 = (user: string, password = PW, account = user) =>
      gw().get('/auth/v1.0').set('X-Auth-User', `${account}:${user}`).set('X-Auth-Key', password);
    const v1Token = async (user: string, password = PW, account = user) => {
      const res = await v1(user, password, account);
      expect(res.status).toBe(200);
      return res.headers['x-auth-token'] as string;
    };
    const v3Token = async (user: string) => {
      const res = await gw()
        .post('/auth/v3/auth/tokens')
        .send({
          auth: {
            identity: {
              methods: ['password'],
              password: { user: { name: user, domain: { id: 'default' }, password: PW } },
            },
          },
        });
      expect(res.status).toBe(201);
      return res.headers['x-subject-token'] as string;
    };
    const valid = async (token: string) => {
      const res = await gw()
        .get('/auth/v3/auth/tokens')
        .set('X-Auth-Token', serviceToken)
        .set('X-Subject-Token', token);
      expect([200, 404]).toContain(res.status);
      return res.status === 200;
    };

    beforeAll(async () => {
      stack = await startStack({ ...backend(), gateway: { tokensPerUser: CAP } });
      await stack.createUser('swift-service', SERVICE_PW, { is_superuser: true });
      serviceToken = await v1Token('swift-service', SERVICE_PW);
    });
    afterAll(() => stack?.close());

    it('when a user logs in more often than CAIRN_TOKENS_PER_USER, then only the newest that many validate', async () => {
      await stack.createUser('carol', PW);
      const tokens: string[] = [];
      for (let i = 0; i < CAP + 3; i++) tokens.push(await v3Token('carol'));
      const live = await Promise.all(tokens.map(valid));
      expect(live).toEqual([...Array(3).fill(false), ...Array(CAP).fill(true)]);
    });

    it('when 64 logins of one user arrive at once, then exactly CAIRN_TOKENS_PER_USER of the tokens handed out validate', async () => {
      await stack.createUser('dora', PW);
      const tokens = await Promise.all(Array.from({ length: 64 }, () => v3Token('dora')));
      expect(new Set(tokens).size).toBe(64);
      const live = await Promise.all(tokens.map(valid));
      expect(live.filter(Boolean)).toHaveLength(CAP);
      // The user's other tokens are not touched by another user's logins.
      expect(await valid(serviceToken)).toBe(true);
    });

    it('when alice logs in over V1 again and again, also 64 times at once, then she is handed one and the same live token', async () => {
      await stack.createUser('alice', PW);
      const first = await v1Token('alice');
      expect(await v1Token('alice')).toBe(first);
      const together = await Promise.all(Array.from({ length: 64 }, () => v1Token('alice')));
      expect(new Set(together)).toEqual(new Set([first]));
      expect(await valid(first)).toBe(true);
      const res = await v1('alice');
      expect(Number(res.headers['x-auth-token-expires'])).toBeGreaterThan(86400 - 60);
    });

    it('when a V1 login asks for another account, then it gets a token of its own for it, and each is reused for its account', async () => {
      await stack.createUser('erin', PW);
      const own = await v1Token('erin');
      const other = await v1Token('erin', PW, 'carol');
      expect(other).not.toBe(own);
      expect(await v1Token('erin', PW, 'carol')).toBe(other);
      expect(await v1Token('erin')).toBe(own);
    });

    it('when the live token was revoked, the user revoked wholesale, pushed out by the cap, or the password changed, then the next V1 login gets a new token', async () => {
      const { id } = await stack.createUser('fred', PW);
      const first = await v1Token('fred');
      expect(
        (await gw().delete('/auth/v3/auth/tokens').set('X-Auth-Token', serviceToken).set('X-Subject-Token', first))
          .status,
      ).toBe(204);
      const second = await v1Token('fred');
      expect(second).not.toBe(first);
      expect(await valid(second)).toBe(true);

      expect((await gw().delete('/auth/v1.0/users/fred/token').set('X-Auth-Token', serviceToken)).status).toBe(204);
      await new Promise((r) => setTimeout(r, 5));
      const third = await v1Token('fred');
      expect(third).not.toBe(second);
      expect(await valid(third)).toBe(true);

      for (let i = 0; i < CAP; i++) await v3Token('fred');
      expect(await valid(third)).toBe(false);
      const fourth = await v1Token('fred');
      expect(fourth).not.toBe(third);
      expect(await valid(fourth)).toBe(true);

      expect(await stack.patchUser(id, { password: NEW_PW })).toBe(202);
      const fifth = await v1Token('fred', NEW_PW);
      expect(fifth).not.toBe(fourth);
      expect(await valid(fifth)).toBe(true);
      expect(await valid(fourth)).toBe(false);
    });

    it('when a user is deleted and re-created with the same name and password, then the new user is never handed the old user’s token', async () => {
      const { id } = await stack.createUser('gina', PW);
      const old = await v1Token('gina');
      expect(await stack.deleteUser(id)).toBe(204);
      await stack.createUser('gina', PW);
      const fresh = await v1Token('gina');
      expect(fresh).not.toBe(old);
      expect(await valid(old)).toBe(false);
      expect(await valid(fresh)).toBe(true);
    });
  });
}
