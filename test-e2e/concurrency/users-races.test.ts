import { verifyPassword } from '@cairn/domain';
import { ADMIN_AUTH, startStack, type Stack } from '../support/stack';
import { login, OK, send, tokenOf, type Api } from '../security/client';
import { permutations, repeat, sleep, timed, type Timed } from './races';

/**
 * Races on one storage user through the real management API and gateway (Postgres + Redis): each
 * outcome must be one a serial execution of the same requests could have produced (every answer
 * and the final row), and no token of a user who was disabled, deleted or changed validates once
 * the gateway's documented staleness bound (CAIRN_USER_CACHE_MS) has passed after the race.
 */
const USER_CACHE_MS = 250;

/** Polls `done` until it holds; fails after 10 s naming `what`. */
async function waitFor(what: string, done: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within 10 s`);
    await sleep(10);
  }
}
const PW = 'original-password-0123456789';
const SERVICE_PW = 'service-password-0123456789';
const APIS: Api[] = ['v1', 'v2', 'v3'];
const REPEAT = repeat(4);

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

interface Row {
  id: string;
  password_hash: string;
  enabled: boolean;
  is_superuser: boolean;
  generation: string;
}

describe('concurrent changes to one storage user', () => {
  let stack: Stack;
  let secondAuth: string;
  let serviceToken: string;
  let seq = 0;

  /** One management API call as the first admin (or another operator's Authorization). */
  async function api(method: string, path: string, body?: unknown, auth = ADMIN_AUTH): Promise<Answer> {
    const res = await fetch(`${stack.apiUrl}${path}`, {
      method,
      headers: { Authorization: auth, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }

  const create = (user: string, password: string, auth?: string) =>
    api('POST', '/api/v1/users/', { cluster: '/api/v1/clusters/1/', user, password }, auth);
  const patch = (id: string, body: Record<string, unknown>, auth?: string) =>
    api('PATCH', `/api/v1/users/${id}/`, body, auth);
  const remove = (id: string, auth?: string) => api('DELETE', `/api/v1/users/${id}`, undefined, auth);
  const rowsNamed = async (user: string): Promise<Row[]> =>
    (
      await stack
        .db('storage_users')
        .select('id', 'password_hash', 'enabled', 'is_superuser', 'generation')
        .where({ username: user })
    ).map((r: Row) => ({
      ...r,
      id: String(r.id),
      generation: String(r.generation),
    }));
  const fresh = (prefix: string) => `${prefix}-${++seq}`;

  const validate = (subject: string) =>
    send(stack.gatewayUrl, '/auth/v3/auth/tokens', {
      headers: { 'X-Auth-Token': serviceToken, 'X-Subject-Token': subject },
    });

  /** After the staleness bound, every token in `tokens` is refused, as subject and as caller. */
  async function expectAllDead(tokens: string[]): Promise<void> {
    await sleep(USER_CACHE_MS);
    const answers = await Promise.all(tokens.map((t) => validate(t)));
    expect(answers.map((a) => a.status)).toEqual(tokens.map(() => 404));
    const asCaller = await Promise.all(
      tokens.map((t) =>
        send(stack.gatewayUrl, '/auth/v3/auth/tokens', {
          headers: { 'X-Auth-Token': t, 'X-Subject-Token': serviceToken },
        }),
      ),
    );
    expect(asCaller.map((a) => a.status)).toEqual(tokens.map(() => 401));
  }

  beforeAll(async () => {
    stack = await startStack({
      redis: true,
      gateway: {
        userCacheMs: USER_CACHE_MS,
        failureLimit: 100_000,
        addressFailureLimit: 1_000_000,
        userFailureLimit: 1_000_000,
      },
    });
    // A second admin operator, created through the API: its key is shown once, in this answer.
    const op = await api('POST', '/api/v1/operators/', { name: 'second-admin', role: 'admin' });
    expect(op.status).toBe(201);
    secondAuth = `ApiKey second-admin:${String(op.body.api_key)}`;
    await stack.createUser('swift-service', SERVICE_PW, { is_superuser: true });
    serviceToken = tokenOf('v3', await login(stack.gatewayUrl, 'v3', 'swift-service', SERVICE_PW));
  });
  afterAll(() => stack.close());

  it('when several creates of one name race, then exactly one is 201, the others 400, and the row holds the winner’s password', async () => {
    for (let r = 0; r < REPEAT; r++) {
      const name = fresh('same-name');
      const passwords = [0, 1, 2, 3].map((i) => `racer-${i}-password-0123456789`);
      const answers = await Promise.all(passwords.map((p, i) => create(name, p, i % 2 ? secondAuth : ADMIN_AUTH)));
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses).toEqual([201, 400, 400, 400]);
      const winner = answers.findIndex((a) => a.status === 201);
      for (const a of answers) if (a.status === 400) expect(JSON.stringify(a.body)).toContain('already exists');
      const rows = await rowsNamed(name);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.id).toBe(answers[winner]!.body.id);
      await expect(verifyPassword(passwords[winner]!, rows[0]!.password_hash)).resolves.toBe(true);
    }
  });

  it('when PATCHes of password, enabled and is_superuser race (two operators), then all are 202 and answers and row match one serial order', async () => {
    type Op = { auth: string; body: { password?: string; enabled?: boolean; is_superuser?: boolean } };
    for (let r = 0; r < REPEAT; r++) {
      const name = fresh('patched');
      const { id } = await stack.createUser(name, PW);
      const [before] = await rowsNamed(name);
      const ops: Op[] = [
        { auth: ADMIN_AUTH, body: { password: `first-new-password-${r}-0123456789` } },
        { auth: secondAuth, body: { password: `second-new-password-${r}-0123456789` } },
        { auth: ADMIN_AUTH, body: { enabled: false } },
        { auth: secondAuth, body: { is_superuser: true } },
      ];
      const answers = await Promise.all(ops.map((op) => patch(id, op.body, op.auth)));
      expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202]);
      const [after] = await rowsNamed(name);
      expect(after!.enabled).toBe(false);
      expect(after!.is_superuser).toBe(true);
      // Each PATCH changed something, so each bumped the generation exactly once.
      expect(Number(after!.generation)).toBe(Number(before!.generation) + 4);
      // Some order of the four explains every answer (the state right after each one) and the row.
      const finalPassword = (await verifyPassword(ops[0]!.body.password!, after!.password_hash)) ? 0 : 1;
      await expect(verifyPassword(ops[finalPassword]!.body.password!, after!.password_hash)).resolves.toBe(true);
      const explains = permutations([0, 1, 2, 3]).some((order) => {
        const state = { enabled: true, is_superuser: false };
        for (const i of order) {
          Object.assign(
            state,
            ops[i]!.body.enabled !== undefined ? { enabled: false } : {},
            ops[i]!.body.is_superuser ? { is_superuser: true } : {},
          );
          if (answers[i]!.body.enabled !== state.enabled || answers[i]!.body.is_superuser !== state.is_superuser)
            return false;
        }
        const lastPassword = order.filter((i) => i < 2).at(-1);
        return lastPassword === finalPassword;
      });
      expect(explains).toBe(true);
      // Each answer shows the password only when it set one: its own.
      answers.forEach((a, i) => expect(a.body.password).toBe(ops[i]!.body.password));
    }
  });

  it('when DELETEs and PATCHes of one user race (two operators), then one DELETE is 204, the other 404, each PATCH 202 or 404, and the user is gone', async () => {
    for (let r = 0; r < REPEAT; r++) {
      const name = fresh('deleted');
      const { id } = await stack.createUser(name, PW);
      const answers = await Promise.all([
        remove(id, ADMIN_AUTH),
        remove(id, secondAuth),
        patch(id, { enabled: false }, secondAuth),
        patch(id, { password: `patched-password-${r}-0123456789` }, ADMIN_AUTH),
      ]);
      const [d1, d2, p1, p2] = answers.map((a) => a.status);
      expect([d1, d2].sort()).toEqual([204, 404]);
      expect([202, 404]).toContain(p1);
      expect([202, 404]).toContain(p2);
      expect(await rowsNamed(name)).toEqual([]);
    }
  });

  it('when a user is deleted while a create of the same name races, then either (204, 201) with a new id or (204, 400) with no row', async () => {
    const seen = new Set<string>();
    for (let r = 0; r < REPEAT; r++) {
      const name = fresh('recreated');
      const { id } = await stack.createUser(name, PW);
      const newPassword = `recreated-password-${r}-0123456789`;
      const [deleted, created] = await Promise.all([remove(id, ADMIN_AUTH), create(name, newPassword, secondAuth)]);
      expect(deleted.status).toBe(204);
      const rows = await rowsNamed(name);
      if (created.status === 201) {
        seen.add('delete, then create');
        expect(rows).toHaveLength(1);
        expect(rows[0]!.id).toBe(created.body.id);
        expect(rows[0]!.id).not.toBe(id);
        await expect(verifyPassword(newPassword, rows[0]!.password_hash)).resolves.toBe(true);
      } else {
        seen.add('create, then delete');
        expect(created.status).toBe(400);
        expect(rows).toEqual([]);
      }
    }
    expect(seen.size).toBeGreaterThan(0);
  });

  describe.each([
    { change: 'disabled', act: (id: string, auth: string) => patch(id, { enabled: false }, auth), status: 202 },
    { change: 'deleted', act: (id: string, auth: string) => remove(id, auth), status: 204 },
    {
      change: 'given a new password',
      act: (id: string, auth: string) => patch(id, { password: 'a-brand-new-password-0123456789' }, auth),
      status: 202,
    },
  ])('logins in flight while the user is $change', ({ act, status }) => {
    it('when logins (V1, V2, V3) race the change, then each is a success before it or a refusal after it, and no token validates afterwards', async () => {
      for (let r = 0; r < REPEAT; r++) {
        const name = fresh('raced');
        const { id } = await stack.createUser(name, PW);
        // Tokens from before the race, and a warm verification cache (the fast path races hardest).
        const before = await Promise.all(APIS.map((a) => login(stack.gatewayUrl, a, name, PW)));
        before.forEach((a, i) => expect(a.status).toBe(OK[APIS[i]!]));
        const tokens = before.map((a, i) => tokenOf(APIS[i]!, a));
        for (const t of tokens) expect((await validate(t)).status).toBe(200);

        const logins: Array<Promise<Timed<{ api: Api; status: number; token?: string }>>> = [];
        for (let i = 0; i < 36; i++) {
          const a = APIS[i % 3]!;
          logins.push(
            timed(i * 4, async () => {
              const answer = await login(stack.gatewayUrl, a, name, PW);
              return {
                api: a,
                status: answer.status,
                ...(answer.status === OK[a] ? { token: tokenOf(a, answer) } : {}),
              };
            }),
          );
        }
        const change = timed(60, () => act(id, r % 2 ? secondAuth : ADMIN_AUTH));
        const [changed, ...raced] = await Promise.all([change, ...logins]);
        expect(changed.value.status).toBe(status);

        for (const l of raced) {
          const ok = l.value.status === OK[l.value.api];
          // Serial: a login answered before the change was sent came first; one sent after the
          // change's answer came after it. Only overlapping ones may go either way.
          if (l.ended < changed.started) expect(ok).toBe(true);
          if (l.started > changed.ended) expect(l.value.status).toBe(401);
          expect(ok || l.value.status === 401).toBe(true);
          if (l.value.token) tokens.push(l.value.token);
        }
        await expectAllDead(tokens);
      }
    });
  });

  it('when validations keep the gateway busy while the user is disabled, then every validation sent more than CAIRN_USER_CACHE_MS after the change was answered is refused', async () => {
    for (let r = 0; r < REPEAT; r++) {
      const name = fresh('validated');
      const { id } = await stack.createUser(name, PW);
      const token = tokenOf('v3', await login(stack.gatewayUrl, 'v3', name, PW));
      const results: Array<Timed<number>> = [];
      let stop = false;
      // Four validators back to back: the user row is re-read (and remembered) again and again,
      // also by queries that started before the change committed.
      const validators = Array.from({ length: 4 }, async () => {
        while (!stop) results.push(await timed(0, async () => (await validate(token)).status));
      });
      // Validations answered before the change, and begun past the staleness bound after it: waited
      // for, however slow the machine (each is asserted below).
      await waitFor('a validation answered before the change', () => results.length > 0);
      const change = await timed(0, () => patch(id, { enabled: false }, r % 2 ? secondAuth : ADMIN_AUTH));
      expect(change.value.status).toBe(202);
      await waitFor('a validation begun past the staleness bound', () =>
        results.some((v) => v.started > change.ended + USER_CACHE_MS),
      );
      stop = true;
      await Promise.all(validators);
      const before = results.filter((v) => v.ended < change.started);
      const after = results.filter((v) => v.started > change.ended + USER_CACHE_MS);
      expect(before.length).toBeGreaterThan(0);
      expect(after.length).toBeGreaterThan(0);
      expect(before.every((v) => v.value === 200)).toBe(true);
      expect(after.map((v) => v.value)).toEqual(after.map(() => 404));
      // In between, only the two serial answers.
      for (const v of results) expect([200, 404]).toContain(v.value);
    }
  });

  it('when two operators disable and re-enable the same user while logins race, then the outcome is one of the two serial orders and the older token is dead', async () => {
    for (let r = 0; r < REPEAT; r++) {
      const name = fresh('flapped');
      const { id } = await stack.createUser(name, PW);
      const [{ generation }] = (await rowsNamed(name)) as [Row];
      const tokens = [tokenOf('v1', await login(stack.gatewayUrl, 'v1', name, PW))];
      const racing = Array.from({ length: 12 }, (_, i) =>
        timed(i * 5, () => login(stack.gatewayUrl, APIS[i % 3]!, name, PW)),
      );
      const [off, on] = await Promise.all([
        patch(id, { enabled: false }, ADMIN_AUTH),
        patch(id, { enabled: true }, secondAuth),
      ]);
      expect([off.status, on.status]).toEqual([202, 202]);
      const [row] = await rowsNamed(name);
      // Each answer is the state right after its own change, whatever the order.
      expect([off.body.enabled, on.body.enabled]).toEqual([false, true]);
      // Serial orders: (enable, disable) → disabled, one generation bump (enabling an enabled
      // user changes nothing); (disable, enable) → enabled, two bumps.
      const bumps = Number(row!.generation) - Number(generation);
      expect(row!.enabled ? bumps === 2 : bumps === 1).toBe(true);
      for (const l of await Promise.all(racing)) expect([200, 201, 401]).toContain(l.value.status);
      // At least one bump: the token from before is dead even when the user ends up enabled again.
      await expectAllDead(tokens);
    }
  });
});
