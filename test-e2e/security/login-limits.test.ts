import { startStack, type Stack } from '../support/stack';
import { login, OK, type Api } from './client';

/**
 * Failed-login limits on the real gateway with real Redis and Postgres: per username
 * (CAIRN_LOGIN_FAILURE_LIMIT / _WINDOW) and per client address (CAIRN_LOGIN_ADDRESS_FAILURE_LIMIT /
 * _WINDOW), for V1, V2 and V3; the client address from the socket, or from X-Forwarded-For only
 * through proxies named in CAIRN_TRUST_PROXY. Clients on different addresses are 127.0.0.x
 * (all loopback on Linux).
 */
const PW = 'the-right-password-0123456789';
const WRONG = 'a-wrong-password-0123456789';
const APIS: Api[] = ['v1', 'v2', 'v3'];
/** Cheap scrypt for stored hashes (unknown users still cost the default one): limits are about counting. */
const CHEAP = { logN: 10, r: 8, p: 1 };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('per-address failure limit', () => {
  let stack: Stack;
  let url: string;

  beforeAll(async () => {
    // The username limit is far away, so every refusal here is the address limit's.
    stack = await startStack({ redis: true, hashParams: CHEAP, gateway: { failureLimit: 1000, addressFailureLimit: 6, addressFailureWindow: 300 } });
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
    const local = await startStack({ redis: true, hashParams: CHEAP, gateway: { failureLimit: 5, addressFailureLimit: 3, addressFailureWindow: 300 } });
    try {
      await local.createUser('carol', PW);
      const attacker = '127.0.0.4';
      for (let i = 0; i < 3; i++) expect((await login(local.gatewayUrl, 'v1', 'carol', WRONG, { from: attacker })).status).toBe(401);
      // Thirty more tries from the blocked address: all refused before any password check.
      const more = await Promise.all(Array.from({ length: 30 }, (_, i) => login(local.gatewayUrl, APIS[i % 3]!, 'carol', WRONG, { from: attacker })));
      expect(more.map((a) => a.status)).toEqual(Array(30).fill(429));
      // carol's count is 3 of 5: one more failure from her own address still leaves her in.
      const own = '127.0.0.5';
      expect((await login(local.gatewayUrl, 'v3', 'carol', WRONG, { from: own })).status).toBe(401);
      expect((await login(local.gatewayUrl, 'v3', 'carol', PW, { from: own })).status).toBe(201);
      // …while the per-username rule itself still applies to everyone: 5 failures lock carol out.
      for (let i = 0; i < 5; i++) await login(local.gatewayUrl, 'v1', 'carol', WRONG, { from: `127.0.1.${i + 1}` });
      const locked = await login(local.gatewayUrl, 'v2', 'carol', PW, { from: '127.0.2.1' });
      expect(locked.status).toBe(429);
      expect(locked.text).toContain('for this user');
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
      const answer = await login(url, 'v3', `xff-${i}`, WRONG, { from, headers: { 'X-Forwarded-For': `198.51.100.${i + 1}` } });
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
    stack = await startStack({ redis: true, hashParams: CHEAP, gateway: { failureLimit: 1000, addressFailureLimit: 4, trustProxy: [balancer] } });
    url = stack.gatewayUrl;
    await stack.createUser('alice', PW);
  });
  afterAll(() => stack.close());

  it('when the trusted balancer forwards X-Forwarded-For, then each forwarded client has its own count', async () => {
    const attacker = { from: balancer, headers: { 'X-Forwarded-For': '203.0.113.5' } };
    for (let i = 0; i < 4; i++) expect((await login(url, 'v2', `who-${i}`, WRONG, attacker)).status).toBe(401);
    expect((await login(url, 'v1', 'alice', PW, attacker)).status).toBe(429);
    // Another client behind the same balancer (same socket address) is not affected.
    expect((await login(url, 'v1', 'alice', PW, { from: balancer, headers: { 'X-Forwarded-For': '203.0.113.6' } })).status).toBe(200);
  });

  it('when a client prepends its own X-Forwarded-For entries, then only the entry the balancer added counts', async () => {
    const from = { from: balancer };
    for (let i = 0; i < 4; i++) {
      // The client claims a new address each time; the balancer appends the real one (203.0.113.7).
      const answer = await login(url, 'v3', `spoof-${i}`, WRONG, { ...from, headers: { 'X-Forwarded-For': `192.0.2.${i + 1}, 203.0.113.7` } });
      expect(answer.status).toBe(401);
    }
    expect((await login(url, 'v3', 'alice', PW, { ...from, headers: { 'X-Forwarded-For': '192.0.2.99, 203.0.113.7' } })).status).toBe(429);
  });

  it('when X-Forwarded-For comes from an address that is not the trusted balancer, then it is ignored', async () => {
    const from = '127.0.0.8';
    for (let i = 0; i < 4; i++) {
      const answer = await login(url, 'v1', `direct-${i}`, WRONG, { from, headers: { 'X-Forwarded-For': `203.0.113.${100 + i}` } });
      expect(answer.status).toBe(401);
    }
    expect((await login(url, 'v1', 'alice', PW, { from, headers: { 'X-Forwarded-For': '203.0.113.200' } })).status).toBe(429);
    // The forwarded address it claimed last is clean when a real balancer forwards it.
    expect((await login(url, 'v1', 'alice', PW, { from: balancer, headers: { 'X-Forwarded-For': '203.0.113.103' } })).status).toBe(200);
  });
});

describe('both limits expire with their windows', () => {
  it('when the right password arrives past a limit, then 429 until the window has passed, then 200 (V1, V2, V3)', async () => {
    const windowSeconds = 8;
    const stack = await startStack({
      redis: true,
      gateway: { failureLimit: 2, failureWindow: windowSeconds, addressFailureLimit: 3, addressFailureWindow: windowSeconds },
    });
    try {
      await stack.createUser('dave', PW);
      await stack.createUser('erin', PW);
      const url = stack.gatewayUrl;
      const started = Date.now();
      // Username limit: two failures for dave, from two addresses (so not the address limit);
      // address limit: three failures from 127.0.3.3 on three other names. All at once, so the
      // windows are still open when the right passwords arrive, however slow the machine.
      const failures = await Promise.all([
        login(url, 'v1', 'dave', WRONG, { from: '127.0.3.1' }),
        login(url, 'v2', 'dave', WRONG, { from: '127.0.3.2' }),
        ...['x1', 'x2', 'x3'].map((name) => login(url, 'v3', name, WRONG, { from: '127.0.3.3' })),
      ]);
      expect(failures.map((a) => a.status)).toEqual([401, 401, 401, 401, 401]);
      // A window opens when its first failure is counted: after `started`, before `counted`.
      const counted = Date.now();
      for (const api of APIS) {
        const byUser = await login(url, api, 'dave', PW, { from: '127.0.3.4' });
        expect(byUser.status).toBe(429);
        expect(Number(byUser.headers['retry-after'])).toBeLessThanOrEqual(windowSeconds);
        const byAddress = await login(url, api, 'erin', PW, { from: '127.0.3.3' });
        expect(byAddress.status).toBe(429);
        expect(Number(byAddress.headers['retry-after'])).toBeLessThanOrEqual(windowSeconds);
      }
      // The refusals came before the windows closed (else the 429s above would not prove much).
      expect(Date.now() - started).toBeLessThan(windowSeconds * 1000);
      await sleep(Math.max(0, windowSeconds * 1000 + 100 - (Date.now() - counted)));
      for (const api of APIS) {
        expect((await login(url, api, 'dave', PW, { from: '127.0.3.4' })).status).toBe(OK[api]);
        expect((await login(url, api, 'erin', PW, { from: '127.0.3.3' })).status).toBe(OK[api]);
      }
    } finally {
      await stack.close();
    }
  });
});

describe('the address limit on the embedded start (PGlite, in-process store)', () => {
  it('when one address fails past its limit, then 429 there and 200 from another address', async () => {
    const stack = await startStack({ database: 'pglite', redis: false, hashParams: CHEAP, gateway: { failureLimit: 1000, addressFailureLimit: 2 } });
    try {
      await stack.createUser('alice', PW);
      const url = stack.gatewayUrl;
      for (let i = 0; i < 2; i++) expect((await login(url, 'v3', 'alice', WRONG, { from: '127.0.4.1' })).status).toBe(401);
      const refused = await login(url, 'v2', 'alice', PW, { from: '127.0.4.1' });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect((await login(url, 'v2', 'alice', PW, { from: '127.0.4.2' })).status).toBe(200);
    } finally {
      await stack.close();
    }
  });
});
