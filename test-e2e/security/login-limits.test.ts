import { startStack, type Stack } from '../support/stack';
import { login, OK, type Api } from './client';

/**
 * Failed-login limits on the real gateway with real Redis and Postgres, for V1, V2 and V3: per
 * client address and username (CAIRN_LOGIN_FAILURE_LIMIT / _WINDOW), per client address
 * (CAIRN_LOGIN_ADDRESS_FAILURE_LIMIT / _WINDOW) and per username from addresses it has not logged
 * in from (CAIRN_LOGIN_USER_FAILURE_LIMIT / _WINDOW); the client address from the socket, or from
 * X-Forwarded-For only through proxies named in CAIRN_TRUST_PROXY. Clients on different addresses
 * are 127.x.y.z (all loopback on Linux).
 */
const PW = 'the-right-password-0123456789';
const WRONG = 'a-wrong-password-0123456789';
const APIS: Api[] = ['v1', 'v2', 'v3'];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the guesser is throttled, not the user it guesses at', () => {
  let stack: Stack;
  let url: string;

  beforeAll(async () => {
    stack = await startStack({
      redis: true,
      gateway: { failureLimit: 5, addressFailureLimit: 100, userFailureLimit: 1000 },
    });
    url = stack.gatewayUrl;
    await stack.createUser('alice', PW);
    await stack.createUser('bob', PW);
  });
  afterAll(() => stack.close());

  it('when one address keeps guessing alice, then it gets 429 for alice (even with the right password) while alice logs in from an address that has not been failing, on V1, V2 and V3', async () => {
    const attacker = '127.0.8.1';
    const answers: number[] = [];
    for (let i = 0; i < 30; i++)
      answers.push((await login(url, APIS[i % 3]!, 'alice', `${WRONG}-${i}`, { from: attacker })).status);
    expect(answers).toEqual([...Array(5).fill(401), ...Array(25).fill(429)]);
    const refused = await login(url, 'v1', 'alice', PW, { from: attacker });
    expect(refused.status).toBe(429);
    expect(refused.text).toContain('for this user from this address');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(300);
    // The owner, from an address she has never used and that has not been failing: in at once.
    for (const api of APIS) expect((await login(url, api, 'alice', PW, { from: '127.0.8.2' })).status).toBe(OK[api]);
    // The attacker's address is throttled for alice only (its own total is far from its limit).
    expect((await login(url, 'v2', 'bob', PW, { from: attacker })).status).toBe(200);
  });

  it('when one address sends its guesses all at once, then only as many are checked as the limit allows and the rest get 429', async () => {
    await stack.createUser('carol', PW);
    const attacker = '127.0.8.4';
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => login(url, APIS[i % 3]!, 'carol', `${WRONG}-${i}`, { from: attacker })),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(25).fill(429)]);
    // Her own client's logins sent together from one address are not refused because of each other.
    const own = await Promise.all(
      Array.from({ length: 12 }, (_, i) => login(url, APIS[i % 3]!, 'carol', PW, { from: '127.0.8.5' })),
    );
    expect(own.map((a, i) => a.status === OK[APIS[i % 3]!])).toEqual(Array(12).fill(true));
  });

  it('when the owner mistypes from her own address and then gets it right, then her count for that address starts again', async () => {
    const own = '127.0.8.3';
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 4; i++) expect((await login(url, 'v1', 'bob', WRONG, { from: own })).status).toBe(401);
      expect((await login(url, 'v1', 'bob', PW, { from: own })).status).toBe(200);
    }
  });
});

describe('guessing one username from many addresses', () => {
  let stack: Stack;
  let url: string;
  const home = '127.0.9.1';

  beforeAll(async () => {
    stack = await startStack({
      redis: true,
      gateway: { failureLimit: 3, addressFailureLimit: 100, userFailureLimit: 10, userFailureWindow: 300 },
    });
    url = stack.gatewayUrl;
    await stack.createUser('alice', PW);
    // alice's usual client: this address becomes one she has logged in from.
    expect((await login(url, 'v1', 'alice', PW, { from: home })).status).toBe(200);
  });
  afterAll(() => stack.close());

  it('when an attacker spreads guesses over 30 addresses, then only CAIRN_LOGIN_USER_FAILURE_LIMIT of them are checked; new addresses then get 429 even with the right password, while alice still logs in from her usual address', async () => {
    const statuses: number[] = [];
    for (let a = 1; a <= 30; a++) {
      // Two guesses per address: under the per-address-and-name limit (3), so only the per-user limit can stop them.
      for (let i = 0; i < 2; i++)
        statuses.push(
          (await login(url, APIS[(a + i) % 3]!, 'alice', `${WRONG}-${a}-${i}`, { from: `127.0.10.${a}` })).status,
        );
    }
    expect(statuses.filter((s) => s === 401)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(50);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));

    // A fresh address is not checked at all now, so a guess that happens to be right gets nothing.
    const fresh = await login(url, 'v3', 'alice', PW, { from: '127.0.11.1' });
    expect(fresh.status).toBe(429);
    expect(fresh.text).toContain('from many addresses');
    expect(Number(fresh.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(fresh.headers['retry-after'])).toBeLessThanOrEqual(300);
    // alice's usual address is still checked: she gets in, and a typo there is an ordinary 401.
    for (const api of APIS) expect((await login(url, api, 'alice', PW, { from: home })).status).toBe(OK[api]);
    expect((await login(url, 'v1', 'alice', WRONG, { from: home })).status).toBe(401);
    expect((await login(url, 'v1', 'alice', PW, { from: home })).status).toBe(200);
  });

  it('when a name that does not exist is guessed from many addresses, then it is answered exactly like an existing one (no enumeration)', async () => {
    const statuses: number[] = [];
    for (let a = 1; a <= 15; a++)
      statuses.push((await login(url, 'v1', 'nobody-here', WRONG, { from: `127.0.12.${a}` })).status);
    expect(statuses).toEqual([...Array(10).fill(401), ...Array(5).fill(429)]);
    expect((await login(url, 'v1', 'nobody-here', WRONG, { from: '127.0.12.99' })).text).toContain(
      'from many addresses',
    );
  });

  it('when alice is deleted and re-created, then her old usual address is not known to the new user (the mark is kept under the row id)', async () => {
    const [row] = await stack.db('storage_users').where({ username: 'alice' }).select('id');
    expect(await stack.deleteUser(String(row.id))).toBe(204);
    await stack.createUser('alice', `${PW}-new`);
    // The name is still under attack (the count is per name), and the new alice has logged in from nowhere yet.
    expect((await login(url, 'v1', 'alice', `${PW}-new`, { from: home })).status).toBe(429);
  });
});

describe('per-address failure limit', () => {
  let stack: Stack;
  let url: string;

  beforeAll(async () => {
    // The username limit is far away, so every refusal here is the address limit's.
    stack = await startStack({
      redis: true,
      gateway: { failureLimit: 1000, addressFailureLimit: 6, addressFailureWindow: 300 },
    });
    url = stack.gatewayUrl;
    await stack.createUser('alice', PW);
    await stack.createUser('bob', PW);
  });
  afterAll(() => stack.close());

  it('when one address fails past its limit over many usernames and all three APIs, then it gets 429 with Retry-After even with a right password, on V1, V2 and V3', async () => {
    const from = '127.0.0.2';
    // Six failures, each for another (partly unknown) username and through another API: the
    // username limit never sees more than one failure per name.
    const names = ['nobody-1', 'nobody-2', 'alice', 'nobody-3', 'nobody-4', 'bob'];
    for (const [i, name] of names.entries()) {
      const answer = await login(url, APIS[i % 3]!, name, WRONG, { from });
      expect(answer.status).toBe(401);
    }
    for (const api of APIS) {
      const refused = await login(url, api, 'alice', PW, { from });
      expect(refused.status).toBe(429);
      const retryAfter = Number(refused.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(300);
      expect(refused.text).toContain('from this address');
      expect(refused.headers['x-auth-token']).toBeUndefined();
      expect(refused.headers['x-subject-token']).toBeUndefined();
    }
    // Another address is not affected: alice and bob log in there.
    for (const api of APIS) {
      expect((await login(url, api, 'alice', PW, { from: '127.0.0.3' })).status).toBe(OK[api]);
      expect((await login(url, api, 'bob', PW, { from: '127.0.0.3' })).status).toBe(OK[api]);
    }
  });

  it('when an address is past its limit, then its further attempts are not counted against the users it names', async () => {
    const local = await startStack({
      redis: true,
      gateway: { failureLimit: 100, addressFailureLimit: 3, userFailureLimit: 5 },
    });
    try {
      await local.createUser('carol', PW);
      const attacker = '127.0.0.4';
      for (let i = 0; i < 3; i++)
        expect((await login(local.gatewayUrl, 'v1', 'carol', WRONG, { from: attacker })).status).toBe(401);
      // Thirty more tries from the blocked address: all refused before any password check.
      const more = await Promise.all(
        Array.from({ length: 30 }, (_, i) => login(local.gatewayUrl, APIS[i % 3]!, 'carol', WRONG, { from: attacker })),
      );
      expect(more.map((a) => a.status)).toEqual(Array(30).fill(429));
      // carol's count is 3 of 5: one more failure from a fresh address still leaves a fresh address in.
      expect((await login(local.gatewayUrl, 'v3', 'carol', WRONG, { from: '127.0.0.5' })).status).toBe(401);
      expect((await login(local.gatewayUrl, 'v3', 'carol', PW, { from: '127.0.0.9' })).status).toBe(201);
    } finally {
      await local.close();
    }
  });

  it('when a client logs in successfully between wrong guesses, then its address count is not reset', async () => {
    const from = '127.0.0.6';
    for (let i = 0; i < 5; i++) {
      expect((await login(url, 'v1', `guess-${i}`, WRONG, { from })).status).toBe(401);
      expect((await login(url, 'v1', 'bob', PW, { from })).status).toBe(200);
    }
    expect((await login(url, 'v1', 'guess-6', WRONG, { from })).status).toBe(401);
    expect((await login(url, 'v1', 'bob', PW, { from })).status).toBe(429);
  });

  it('when X-Forwarded-For is sent but no proxy is trusted (the default), then it is ignored: rotating it does not escape the limit', async () => {
    const from = '127.0.0.7';
    for (let i = 0; i < 6; i++) {
      const answer = await login(url, 'v3', `xff-${i}`, WRONG, {
        from,
        headers: { 'X-Forwarded-For': `198.51.100.${i + 1}` },
      });
      expect(answer.status).toBe(401);
    }
    const refused = await login(url, 'v3', 'alice', PW, { from, headers: { 'X-Forwarded-For': '198.51.100.200' } });
    expect(refused.status).toBe(429);
  });
});

describe('per-address failure limit behind a trusted load balancer (CAIRN_TRUST_PROXY)', () => {
  let stack: Stack;
  let url: string;
  const balancer = '127.0.0.1';

  beforeAll(async () => {
    stack = await startStack({
      redis: true,
      gateway: { failureLimit: 1000, addressFailureLimit: 4, trustProxy: [balancer] },
    });
    url = stack.gatewayUrl;
    await stack.createUser('alice', PW);
  });
  afterAll(() => stack.close());

  it('when the trusted balancer forwards X-Forwarded-For, then each forwarded client has its own count', async () => {
    const attacker = { from: balancer, headers: { 'X-Forwarded-For': '203.0.113.5' } };
    for (let i = 0; i < 4; i++) expect((await login(url, 'v2', `who-${i}`, WRONG, attacker)).status).toBe(401);
    expect((await login(url, 'v1', 'alice', PW, attacker)).status).toBe(429);
    // Another client behind the same balancer (same socket address) is not affected.
    expect(
      (await login(url, 'v1', 'alice', PW, { from: balancer, headers: { 'X-Forwarded-For': '203.0.113.6' } })).status,
    ).toBe(200);
  });

  it('when a client prepends its own X-Forwarded-For entries, then only the entry the balancer added counts', async () => {
    const from = { from: balancer };
    for (let i = 0; i < 4; i++) {
      // The client claims a new address each time; the balancer appends the real one (203.0.113.7).
      const answer = await login(url, 'v3', `spoof-${i}`, WRONG, {
        ...from,
        headers: { 'X-Forwarded-For': `192.0.2.${i + 1}, 203.0.113.7` },
      });
      expect(answer.status).toBe(401);
    }
    expect(
      (await login(url, 'v3', 'alice', PW, { ...from, headers: { 'X-Forwarded-For': '192.0.2.99, 203.0.113.7' } }))
        .status,
    ).toBe(429);
  });

  it('when X-Forwarded-For comes from an address that is not the trusted balancer, then it is ignored', async () => {
    const from = '127.0.0.8';
    for (let i = 0; i < 4; i++) {
      const answer = await login(url, 'v1', `direct-${i}`, WRONG, {
        from,
        headers: { 'X-Forwarded-For': `203.0.113.${100 + i}` },
      });
      expect(answer.status).toBe(401);
    }
    expect(
      (await login(url, 'v1', 'alice', PW, { from, headers: { 'X-Forwarded-For': '203.0.113.200' } })).status,
    ).toBe(429);
    // The forwarded address it claimed last is clean when a real balancer forwards it.
    expect(
      (await login(url, 'v1', 'alice', PW, { from: balancer, headers: { 'X-Forwarded-For': '203.0.113.103' } })).status,
    ).toBe(200);
  });
});

describe('all three limits expire with their windows', () => {
  it('when the right password arrives past any of the three limits, then 429 until the window has passed, then 200 (V1, V2, V3)', async () => {
    const windowSeconds = 8;
    const stack = await startStack({
      redis: true,
      gateway: {
        failureLimit: 2,
        failureWindow: windowSeconds,
        addressFailureLimit: 3,
        addressFailureWindow: windowSeconds,
        userFailureLimit: 4,
        userFailureWindow: windowSeconds,
      },
    });
    try {
      await stack.createUser('dave', PW);
      await stack.createUser('erin', PW);
      await stack.createUser('fay', PW);
      const url = stack.gatewayUrl;
      const started = Date.now();
      // Per address and username: two failures for dave from 127.0.3.1; per address: three failures
      // from 127.0.3.3 on three other names; per username: four failures for fay from four
      // addresses. All at once, so the windows are still open when the right passwords arrive,
      // however slow the machine.
      const failures = await Promise.all([
        login(url, 'v1', 'dave', WRONG, { from: '127.0.3.1' }),
        login(url, 'v2', 'dave', WRONG, { from: '127.0.3.1' }),
        ...['x1', 'x2', 'x3'].map((name) => login(url, 'v3', name, WRONG, { from: '127.0.3.3' })),
        ...[5, 6, 7, 8].map((n) => login(url, 'v1', 'fay', WRONG, { from: `127.0.3.${n}` })),
      ]);
      expect(failures.map((a) => a.status)).toEqual(Array(9).fill(401));
      // A window opens when its first failure is counted: after `started`, before `counted`.
      const counted = Date.now();
      for (const api of APIS) {
        const byPair = await login(url, api, 'dave', PW, { from: '127.0.3.1' });
        expect(byPair.status).toBe(429);
        expect(Number(byPair.headers['retry-after'])).toBeLessThanOrEqual(windowSeconds);
        const byAddress = await login(url, api, 'erin', PW, { from: '127.0.3.3' });
        expect(byAddress.status).toBe(429);
        expect(Number(byAddress.headers['retry-after'])).toBeLessThanOrEqual(windowSeconds);
        const byUser = await login(url, api, 'fay', PW, { from: '127.0.3.9' });
        expect(byUser.status).toBe(429);
        expect(Number(byUser.headers['retry-after'])).toBeLessThanOrEqual(windowSeconds);
      }
      // The refusals came before the windows closed (else the 429s above would not prove much).
      expect(Date.now() - started).toBeLessThan(windowSeconds * 1000);
      await sleep(Math.max(0, windowSeconds * 1000 + 100 - (Date.now() - counted)));
      for (const api of APIS) {
        expect((await login(url, api, 'dave', PW, { from: '127.0.3.1' })).status).toBe(OK[api]);
        expect((await login(url, api, 'erin', PW, { from: '127.0.3.3' })).status).toBe(OK[api]);
        expect((await login(url, api, 'fay', PW, { from: '127.0.3.9' })).status).toBe(OK[api]);
      }
    } finally {
      await stack.close();
    }
  });
});

describe('the address limit on the embedded start (PGlite, in-process store)', () => {
  it('when one address fails past its limit, then 429 there and 200 from another address', async () => {
    const stack = await startStack({
      database: 'pglite',
      redis: false,
      gateway: { failureLimit: 1000, addressFailureLimit: 2 },
    });
    try {
      await stack.createUser('alice', PW);
      const url = stack.gatewayUrl;
      for (let i = 0; i < 2; i++)
        expect((await login(url, 'v3', 'alice', WRONG, { from: '127.0.4.1' })).status).toBe(401);
      const refused = await login(url, 'v2', 'alice', PW, { from: '127.0.4.1' });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect((await login(url, 'v2', 'alice', PW, { from: '127.0.4.2' })).status).toBe(200);
    } finally {
      await stack.close();
    }
  });
});
