import { scrypt } from 'node:crypto';
import { startStack, ADMIN_AUTH, type Stack } from '../support/stack';
import { login, send } from './client';

/**
 * Imported password hashes whose check would cost the gateway too much, or that crypto.scrypt
 * refuses, on the real gateway with real Postgres and Redis: refused on import with a sentence
 * naming the limit, and, when a row holds one anyway (written by an older version, or to the
 * database directly), a failed login that is never computed and counted like any other.
 */
const PW = 'the-right-password-0123456789';
const SALT = 'QKiVknKOcc5ZC6H0fs9Zaw';
const CHECKSUM = 'IX0ITKeHpM4OK8sq6yjN7hbyZCq62S3/jy/05ZQ7Et4';
/** 256 MiB and 16 lanes: 7.9 s and +257 MB of the gateway per wrong password, before the bound. */
const COSTLY = `$scrypt$ln=17,r=16,p=16$${SALT}$${CHECKSUM}`;
/** Within the old memory bound, but N is not below 2^(16·r): crypto.scrypt throws. */
const REFUSED_BY_NODE = `$scrypt$ln=21,r=1,p=16$${SALT}$${CHECKSUM}`;

interface LogLine {
  level: number;
  msg: string;
  user?: string;
  reason?: string;
  err?: unknown;
  stack?: unknown;
}

// Making a 256 MiB scrypt hash, and the stack's start, take seconds on a busy machine.
jest.setTimeout(120_000);

describe('imported password hashes past the cost bound', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({
      redis: true,
      gateway: { failureLimit: 3, addressFailureLimit: 100, userFailureLimit: 1000 },
    });
  });
  afterAll(() => stack.close());

  const users = async () => (await stack.db('storage_users').count<Array<{ count: string }>>('* as count'))[0]!.count;
  /** A user whose stored hash is written to the database directly, past the API's checks. */
  const storedDirectly = async (name: string, hash: string) => {
    const { id } = await stack.createUser(name, PW);
    await stack.db('storage_users').where({ id }).update({ password_hash: hash });
  };
  const logLines = (user: string) =>
    stack.gatewayLogs.lines.map((l) => JSON.parse(l) as LogLine).filter((l) => l.user === user);

  it('when an import gives a hash past the bound or one crypto.scrypt refuses, then 400 names the limit and nothing is created', async () => {
    const before = await users();
    const create = (user: string, hash: string) =>
      send(stack.apiUrl, '/api/v1/users/', {
        method: 'POST',
        headers: { Authorization: ADMIN_AUTH },
        body: { cluster: '/api/v1/clusters/1/', user, password_hash: hash },
      });
    const costly = await create('costly', COSTLY);
    expect(costly.status).toBe(400);
    expect(costly.text).toContain(
      "holds a hash Cairn will not check: scrypt's memory (128·N·r bytes) must be at most 128 MiB, 4 times what Cairn's own hash needs; ln=17,r=16,p=16 needs 256 MiB.",
    );
    const refused = await create('refused', REFUSED_BY_NODE);
    expect(refused.status).toBe(400);
    expect(refused.text).toContain(
      'scrypt cannot run with ln=21,r=1,p=16: N = 2^ln must be below 2^(16·r), so ln at most 15 for r=1.',
    );
    // The bulk create (what `cairn users import` sends) refuses it by the same rule.
    const bulk = await send(stack.apiUrl, '/api/v1/users/', {
      method: 'PATCH',
      headers: { Authorization: ADMIN_AUTH },
      body: { objects: [{ cluster: '/api/v1/clusters/1/', user: 'bulk-costly', password_hash: COSTLY }] },
    });
    expect(bulk.status).toBe(400);
    expect(bulk.text).toContain('must be at most 128 MiB');
    expect(await users()).toBe(before);
  });

  it('when a stored hash is one crypto.scrypt refuses, then each login is a 401 counted as a failure, then 429, never a 500, with a one-line warning', async () => {
    await storedDirectly('node-refuses', REFUSED_BY_NODE);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await login(stack.gatewayUrl, 'v1', 'node-refuses', `wrong-${i}`, { from: '127.0.20.1' })).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    const lines = logLines('node-refuses');
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const line of lines) {
      expect(line).toMatchObject({
        level: 40,
        msg: 'stored password hash refused without being checked; the login fails',
        reason: 'scrypt cannot run with ln=21,r=1,p=16: N = 2^ln must be below 2^(16·r), so ln at most 15 for r=1',
      });
      expect(line.err ?? line.stack).toBeUndefined();
    }
    expect(stack.gatewayLogs.text).not.toContain('ERR_CRYPTO_INVALID_SCRYPT_PARAMS');
    expect(stack.gatewayLogs.text).not.toContain('"status":500');
  });

  it('when a stored hash of the right password is past the bound, then that password is refused without the hash being computed', async () => {
    // A real hash of PW at twice the memory bound (256 MiB): the right password, were it checked.
    const salt = Buffer.from('sixteen byte slt');
    // Off the event loop: a synchronous run of seconds would leave the test's idle keep-alive
    // connections to the stack unserviced, and the next request could be sent on one the server
    // had already closed (ECONNRESET).
    const key = await new Promise<Buffer>((resolve, reject) =>
      scrypt(PW, salt, 32, { N: 2 ** 18, r: 8, p: 1, maxmem: 2 ** 30 }, (err, k) => (err ? reject(err) : resolve(k))),
    );
    const strip = (b: Buffer) => b.toString('base64').replace(/=+$/, '');
    await storedDirectly('past-bound', `$scrypt$ln=18,r=8,p=1$${strip(salt)}$${strip(key)}`);
    for (const api of ['v1', 'v2', 'v3'] as const)
      expect((await login(stack.gatewayUrl, api, 'past-bound', PW, { from: '127.0.20.2' })).status).toBe(401);
    expect(logLines('past-bound')).toEqual(
      Array(3).fill(
        expect.objectContaining({
          level: 40,
          reason:
            "scrypt's memory (128·N·r bytes) must be at most 128 MiB, 4 times what Cairn's own hash needs; ln=18,r=8,p=1 needs 256 MiB",
        }),
      ),
    );
    // An ordinary user on the same gateway is unaffected.
    await stack.createUser('ordinary', PW);
    expect((await login(stack.gatewayUrl, 'v1', 'ordinary', PW, { from: '127.0.20.2' })).status).toBe(200);
  });
});
