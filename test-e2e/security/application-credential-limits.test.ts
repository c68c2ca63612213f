import type { Knex } from 'knex';
import { startStack, type Stack } from '../support/stack';
import { login, send, type Answer } from './client';

/**
 * Application credential logins go through the gateway's one failed-login limiter, with the same
 * counters as password logins (CAIRN_LOGIN_FAILURE_LIMIT per address and name, …_ADDRESS_… per
 * address, …_USER_… per name): by id they count under the credential's id, by name under its
 * user's name, shared with that user's password logins. Real gateway, Redis and Postgres; clients
 * on different addresses are 127.x.y.z.
 */
const PW = 'the-right-password-0123456789';

const appCredLogin = (url: string, credential: Record<string, unknown>, from: string): Promise<Answer> =>
  send(url, '/auth/v3/auth/tokens', {
    method: 'POST',
    from,
    body: { auth: { identity: { methods: ['application_credential'], application_credential: credential } } },
  });

describe('application credential logins under the failed-login limits', () => {
  let stack: Stack;
  let url: string;
  let credential: { id: string; secret: string };

  beforeAll(async () => {
    stack = await startStack({
      redis: true,
      gateway: { failureLimit: 5, addressFailureLimit: 100, userFailureLimit: 1000 },
    });
    url = stack.gatewayUrl;
    await stack.createUser('alice', PW);
    const token = (await login(url, 'v3', 'alice', PW, { from: '127.0.10.1' })).headers['x-subject-token'] as string;
    const made = await send(url, '/auth/v3/users/alice/application_credentials', {
      method: 'POST',
      headers: { 'X-Auth-Token': token },
      body: { application_credential: { name: 'ci' } },
    });
    expect(made.status).toBe(201);
    credential = (JSON.parse(made.text) as { application_credential: { id: string; secret: string } })
      .application_credential;
  });
  afterAll(() => stack.close());

  it("when one address keeps guessing a credential's secret by id, then past the limit it gets 429 even with the right secret, while another address logs in with it", async () => {
    const attacker = '127.0.10.2';
    const answers: number[] = [];
    for (let i = 0; i < 8; i++)
      answers.push(
        (await appCredLogin(url, { id: credential.id, secret: `wrong-secret-${i}-0123456789abcdefghij` }, attacker))
          .status,
      );
    expect(answers).toEqual([...Array(5).fill(401), ...Array(3).fill(429)]);
    const refused = await appCredLogin(url, { id: credential.id, secret: credential.secret }, attacker);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(JSON.parse(refused.text)).toEqual({
      error: { code: 429, title: 'Too Many Requests', message: expect.stringContaining('Too many failed logins') },
    });
    expect((await appCredLogin(url, { id: credential.id, secret: credential.secret }, '127.0.10.3')).status).toBe(201);
  });

  it('when guesses by name and by password for the same user come from one address, then they add up in one count', async () => {
    const attacker = '127.0.10.4';
    for (let i = 0; i < 3; i++) {
      expect(
        (
          await appCredLogin(
            url,
            {
              name: 'ci',
              user: { name: 'alice', domain: { id: 'default' } },
              secret: `wrong-secret-${i}-0123456789abcdefghij`,
            },
            attacker,
          )
        ).status,
      ).toBe(401);
    }
    for (let i = 0; i < 2; i++)
      expect((await login(url, 'v3', 'alice', `a-wrong-password-${i}-0123456789`, { from: attacker })).status).toBe(
        401,
      );
    // Five failures for alice from this address: her right password is refused there now, and so is the credential by
    // name.
    expect((await login(url, 'v3', 'alice', PW, { from: attacker })).status).toBe(429);
    expect(
      (await appCredLogin(url, { name: 'ci', user: { id: 'alice' }, secret: credential.secret }, attacker)).status,
    ).toBe(429);
    expect((await login(url, 'v3', 'alice', PW, { from: '127.0.10.5' })).status).toBe(201);
  });

  it('when an unknown id, a known id, an unknown user or a known user is tried with a wrong secret, then each costs the same queries and counter operations and gets the same answers', async () => {
    const db = stack.gatewayDeps.db as Knex;
    const store = stack.gatewayDeps.store as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    let queries = 0;
    const counted = () => queries++;
    const storeCalls: string[] = [];
    const originals = new Map<string, (...args: unknown[]) => Promise<unknown>>();
    for (const name of ['failures', 'recordFailure', 'hasFlag', 'clearFailures', 'setFlag']) {
      const original = store[name]!;
      originals.set(name, original);
      store[name] = (...args: unknown[]) => {
        storeCalls.push(name);
        return original.apply(stack.gatewayDeps.store, args);
      };
    }
    db.on('query', counted);
    try {
      const cost = async (body: Record<string, unknown>, from: string) => {
        queries = 0;
        storeCalls.length = 0;
        const statuses: number[] = [];
        for (let i = 0; i < 6; i++)
          statuses.push(
            (await appCredLogin(url, { ...body, secret: `wrong-secret-${i}-0123456789abcdefghij` }, from)).status,
          );
        return { queries, storeCalls: [...storeCalls].sort().join(','), statuses };
      };
      const knownId = await cost({ id: credential.id }, '127.0.11.1');
      const unknownId = await cost({ id: 'f'.repeat(32) }, '127.0.11.2');
      const malformedId = await cost({ id: 'not-an-id' }, '127.0.11.3');
      const knownName = await cost({ name: 'ci', user: { name: 'alice' } }, '127.0.11.4');
      const unknownUser = await cost({ name: 'ci', user: { name: 'nobody-here' } }, '127.0.11.5');
      const unknownName = await cost({ name: 'nothing', user: { name: 'alice' } }, '127.0.11.6');
      expect(knownId.statuses).toEqual([...Array(5).fill(401), 429]);
      // A lookup's answer, found or not, is remembered behind the notice fence for at most
      // CAIRN_USER_CACHE_MS, so how many of the five looked-up logins query Postgres depends on the
      // clock (and on what an earlier test asked), never on what exists: at most one per lookup.
      const all = [knownId, unknownId, malformedId, knownName, unknownUser, unknownName];
      const { queries: _ours, ...rest } = knownId;
      for (const other of all) {
        const { queries: theirs, ...same } = other;
        expect(same).toEqual(rest);
        expect(theirs).toBeLessThanOrEqual(5);
      }
      // The count works: the six cases did read Postgres.
      expect(all.reduce((n, c) => n + c.queries, 0)).toBeGreaterThan(0);
    } finally {
      db.removeListener('query', counted);
      for (const [name, original] of originals) store[name] = original;
    }
  });
});
