import knex, { type Knex } from 'knex';
import request from 'supertest';
import { startStack, type Stack } from '../support/stack';

const PW = 'grace-password-0123456789';

/**
 * Logins may use a user row the gateway remembers only while it hears Postgres's change notices:
 * every change must then be honoured by the very next login, whoever made it, and losing the
 * notice connection must make logins read Postgres again until it is back.
 */
async function until(check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not true within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('auth-gateway logins and user changes on postgres', () => {
  let stack: Stack;
  let admin: Knex;
  const v1 = (user: string, key = PW) =>
    request(stack.gatewayUrl).get('/auth/v1.0').set('X-Auth-User', user).set('X-Auth-Key', key);
  const listenBackends = () =>
    admin.raw(
      `SELECT pid FROM pg_stat_activity WHERE application_name = 'cairn-auth-gateway-listen' AND datname = current_database()`,
    );

  beforeAll(async () => {
    stack = await startStack({ database: 'postgres', redis: true });
    // The stack's own database, as a superuser: it may end the gateway's connections.
    admin = knex({ client: 'pg', connection: stack.databaseUrl!, pool: { min: 0, max: 1 } });
  });
  afterAll(async () => {
    await admin.destroy();
    await stack.close();
  });

  it('when a user is disabled, enabled, and given a new password through the API, then the very next login sees it, every time', async () => {
    const { id } = await stack.createUser('grace', PW);
    expect(stack.gatewayDeps.userChanges).toBeDefined();
    for (let round = 0; round < 10; round++) {
      expect((await v1('grace')).status).toBe(200);
      expect(await stack.patchUser(id, { enabled: false })).toBe(202);
      expect([round, (await v1('grace')).status]).toEqual([round, 401]);
      expect(await stack.patchUser(id, { enabled: true })).toBe(202);
      expect([round, (await v1('grace')).status]).toEqual([round, 200]);
    }
    const next = `${PW}-next`;
    expect(await stack.patchUser(id, { password: next })).toBe(202);
    expect((await v1('grace')).status).toBe(401);
    expect((await v1('grace', next)).status).toBe(200);
  });

  it('when a user is deleted and re-created with a new password, then the old password is refused at once on V1, V2 and V3, and no token from before the DELETE validates', async () => {
    const { id } = await stack.createUser('judy', PW);
    await stack.createUser('judy-service', PW, { is_superuser: true });
    const serviceToken = (await v1('judy-service')).headers['x-auth-token'] as string;
    const v2 = (password: string) =>
      request(stack.gatewayUrl)
        .post('/auth/v2.0/tokens')
        .send({ auth: { passwordCredentials: { username: 'judy', password } } });
    const v3 = (password: string) =>
      request(stack.gatewayUrl)
        .post('/auth/v3/auth/tokens')
        .send({
          auth: {
            identity: {
              methods: ['password'],
              password: { user: { name: 'judy', domain: { id: 'default' }, password } },
            },
          },
        });
    const validate = (token: string) =>
      request(stack.gatewayUrl)
        .get('/auth/v3/auth/tokens')
        .set('X-Auth-Token', serviceToken)
        .set('X-Subject-Token', token);
    // Every cache warm with the old password: the remembered check (the second login hits it) and the row.
    const before = [
      (await v1('judy')).headers['x-auth-token'] as string,
      (await v1('judy')).headers['x-auth-token'] as string,
    ];
    expect((await v2(PW)).status).toBe(200);
    expect((await v3(PW)).status).toBe(201);
    for (const token of before) expect((await validate(token)).status).toBe(200);

    expect(await stack.deleteUser(id)).toBe(204);
    const next = `${PW}-re-created`;
    await stack.createUser('judy', next);
    // No waiting: the very next requests after the re-creating POST was answered.
    expect((await v1('judy')).status).toBe(401);
    expect((await v2(PW)).status).toBe(401);
    expect((await v3(PW)).status).toBe(401);
    expect((await v1('judy', next)).status).toBe(200);
    for (const token of before) expect((await validate(token)).status).toBe(404);
  });

  it('when a user is changed with plain SQL, not through the API, then the next login sees it too', async () => {
    await stack.createUser('heidi', PW);
    expect((await v1('heidi')).status).toBe(200);
    await stack.db('storage_users').where({ username: 'heidi' }).update({ enabled: false });
    expect((await v1('heidi')).status).toBe(401);
    await stack.db('storage_users').where({ username: 'heidi' }).delete();
    expect((await v1('heidi')).status).toBe(401);
    await stack.createUser('heidi', PW);
    expect((await v1('heidi')).status).toBe(200);
  });

  it('when the notice connection is cut, then logins read Postgres until it is back, and it comes back by itself', async () => {
    await stack.createUser('ivan', PW);
    expect((await v1('ivan')).status).toBe(200);
    const { rows } = (await listenBackends()) as { rows: Array<{ pid: number }> };
    expect(rows).toHaveLength(1);
    await admin.raw('SELECT pg_terminate_backend(?)', [rows[0]!.pid]);
    // Until the gateway has noticed (a dead TCP peer may take longer than this), rows it
    // remembers are at most CAIRN_USER_CACHE_MS old: the bound validation always had.
    await until(() => !stack.gatewayDeps.users.isFollowing);
    // Changes made while nobody listens cannot be heard: they must be seen all the same.
    await stack.db('storage_users').where({ username: 'ivan' }).update({ enabled: false });
    expect((await v1('ivan')).status).toBe(401);
    await stack.db('storage_users').where({ username: 'ivan' }).update({ enabled: true });
    expect((await v1('ivan')).status).toBe(200);
    await until(() => stack.gatewayDeps.users.isFollowing);
    expect(((await listenBackends()) as { rows: unknown[] }).rows).toHaveLength(1);
    await stack.db('storage_users').where({ username: 'ivan' }).update({ enabled: false });
    expect((await v1('ivan')).status).toBe(401);
  });
});

describe('auth-gateway with CAIRN_USER_NOTICES_URL=off', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      database: 'postgres',
      redis: true,
      gateway: { userNoticesUrl: 'off' },
    });
  });
  afterAll(() => stack.close());

  it('when notices are off, then no notice connection is opened and every login reads its row, so a change is seen at once', async () => {
    expect(stack.gatewayDeps.userChanges).toBeUndefined();
    const listening = await stack.db.raw(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'cairn-auth-gateway-listen' AND datname = current_database()`,
    );
    expect((listening as { rows: Array<{ n: number }> }).rows[0]!.n).toBe(0);
    await stack.createUser('kim', PW);
    const v1 = () => request(stack.gatewayUrl).get('/auth/v1.0').set('X-Auth-User', 'kim').set('X-Auth-Key', PW);
    expect((await v1()).status).toBe(200);
    await stack.db('storage_users').where({ username: 'kim' }).update({ enabled: false });
    expect((await v1()).status).toBe(401);
  });
});
