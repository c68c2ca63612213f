import request from 'supertest';
import { startStack, type Stack, type StackOptions } from '../support/stack';
import { S3_KEYS, v3Token } from './s3-client';

const PW = 'pw-0123456789-abcdefgh';
const LIMIT = 4;

/**
 * How often a storage user may create or delete its own S3 credentials through OS-EC2: each change
 * writes an audit record, so an unbounded loop would flood the trail (SECURITY.md, "Accountability").
 */
describe.each<[string, StackOptions]>([
  ['Postgres + Redis', { database: 'postgres', redis: true }],
  ['PGlite + in-process store', { database: 'pglite', redis: false }],
])('OS-EC2 credential changes per user on %s', (_name, options) => {
  let stack: Stack;
  const base = (user: string) => `/auth/v3/users/${encodeURIComponent(user)}/credentials/OS-EC2`;
  const create = (token: string, user: string) =>
    request(stack.gatewayUrl).post(base(user)).set('X-Auth-Token', token).send({});
  const remove = (token: string, user: string, access: string) =>
    request(stack.gatewayUrl)
      .delete(`${base(user)}/${access}`)
      .set('X-Auth-Token', token);
  const auditRows = async (user: string) =>
    Number(
      (
        (await stack
          .db('audit_log')
          .where({ operator_name: `storage user ${user}` })
          .count({ n: '*' })) as Array<{ n: string | number }>
      )[0]!.n,
    );

  beforeAll(async () => {
    stack = await startStack({
      ...options,
      s3SecretKeys: S3_KEYS,
      gateway: { s3tokensRequireServiceToken: false, ec2ChangeLimit: LIMIT, ec2ChangeWindow: 600 },
    });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('when a user loops creating and deleting credentials, then the change past the limit is 429 with a sentence and Retry-After, and writes nothing, not even an audit record', async () => {
    await stack.createUser('gus', PW);
    const gus = await v3Token(stack.gatewayUrl, 'gus', PW);
    for (let i = 0; i < LIMIT / 2; i++) {
      const made = await create(gus, 'gus');
      expect(made.status).toBe(201);
      expect((await remove(gus, 'gus', made.body.credential.access as string)).status).toBe(204);
    }
    expect(await auditRows('gus')).toBe(LIMIT);

    const refused = await create(gus, 'gus');
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(600);
    expect(refused.body).toEqual({
      error: {
        code: 429,
        title: 'Too Many Requests',
        message: expect.stringMatching(/^Too many S3 credential changes: .*\.$/),
      },
    });
    expect((await request(stack.gatewayUrl).get(base('gus')).set('X-Auth-Token', gus)).body.credentials).toEqual([]);
    expect(await auditRows('gus')).toBe(LIMIT);
  });

  it('when a user at its limit deletes, then 429 too and its credential stays; reading its credentials is not limited; another user is not affected', async () => {
    await stack.createUser('hal', PW);
    await stack.createUser('ida', PW);
    const [hal, ida] = await Promise.all([v3Token(stack.gatewayUrl, 'hal', PW), v3Token(stack.gatewayUrl, 'ida', PW)]);
    const first = await create(hal, 'hal');
    expect(first.status).toBe(201);
    // Deletes of keys that do not exist: attempted changes, so they count.
    for (let i = 1; i < LIMIT; i++)
      expect((await remove(hal, 'hal', `CCCCCCCCCCCCCCCCCC${String(i).padStart(2, '0')}`)).status).toBe(404);
    const refused = await remove(hal, 'hal', first.body.credential.access as string);
    expect(refused.status).toBe(429);
    const listed = await request(stack.gatewayUrl).get(base('hal')).set('X-Auth-Token', hal);
    expect(listed.status).toBe(200);
    expect(listed.body.credentials.map((c: { access: string }) => c.access)).toContain(first.body.credential.access);
    expect((await create(ida, 'ida')).status).toBe(201);
  });

  it('when changes are sent all at once, then exactly as many as the limit are let through', async () => {
    await stack.createUser('jo', PW);
    const jo = await v3Token(stack.gatewayUrl, 'jo', PW);
    // Deletes of keys that do not exist: each is an attempted change and counts, none writes.
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => remove(jo, 'jo', `AAAAAAAAAAAAAAAAAA${String(i).padStart(2, '0')}`)),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 404)).toHaveLength(LIMIT);
    expect(statuses.filter((s) => s === 429)).toHaveLength(12 - LIMIT);
  });

  it('when a user is deleted and re-created under the same name, then the new user has a count of its own (the count is by row id)', async () => {
    const { id } = await stack.createUser('kit', PW);
    const kit = await v3Token(stack.gatewayUrl, 'kit', PW);
    for (let i = 0; i < LIMIT; i++)
      expect((await remove(kit, 'kit', `BBBBBBBBBBBBBBBBBB${String(i).padStart(2, '0')}`)).status).toBe(404);
    expect((await create(kit, 'kit')).status).toBe(429);
    expect(await stack.deleteUser(id)).toBe(204);
    await stack.createUser('kit', PW);
    const again = await v3Token(stack.gatewayUrl, 'kit', PW);
    expect((await create(again, 'kit')).status).toBe(201);
  });
});
