/**
 * @slow: a primary and a standby, over a minute (jest.sequencer.js starts it first)
 */
import { randomBytes } from 'node:crypto';
import knex from 'knex';
import { RedisServer } from './support/redis-server';
import { ReplicatedPostgres } from './support/replicated-postgres';
import { signedBody } from '../s3/s3-client';
import { ADMIN_AUTH, launchApi, launchGateway, type Service } from './support/services';

const PW = 'regions-password-0123456789';
/** The gateways' CAIRN_STANDBY_MAX_LAG here: short, so the stale cases take seconds, not minutes. */
const MAX_LAG_S = 2;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every 10 ms; the time it took, or throws after `ms`. */
async function until(what: string, check: () => Promise<boolean>, ms = 10_000): Promise<number> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > ms) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(10);
  }
  return Date.now() - start;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/**
 * A region: the primary (with the management API) in one place, a streaming hot standby and two
 * gateways reading it in another, each with the Redis of its region. One gateway refuses once its
 * copy is more than MAX_LAG_S behind (the default), the other keeps serving (CAIRN_STANDBY_STALE=serve).
 * Every check goes through real processes over HTTP; the standby is a real pg_basebackup -R copy.
 */
describe('a gateway reading a hot standby in its region', () => {
  const pg = new ReplicatedPostgres();
  const redis = new RedisServer();
  let api: Service;
  let refusing: Service;
  let serving: Service;
  const started: Service[] = [];

  const adminCall = (method: string, path: string, body?: unknown) =>
    fetch(`${api.url}${path}`, {
      method,
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(5000),
    });
  const createUser = async (user: string, extra: object = {}): Promise<string> => {
    const res = await adminCall('POST', '/api/v1/users/', {
      cluster: '/api/v1/clusters/1/',
      user,
      password: PW,
      ...extra,
    });
    if (res.status !== 201) throw new Error(`create ${user}: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { id: string }).id;
  };
  const patchUser = async (id: string, body: object) => {
    const res = await adminCall('PATCH', `/api/v1/users/${id}/`, body);
    if (res.status !== 202) throw new Error(`patch ${id}: ${res.status} ${await res.text()}`);
  };
  /** A V1 login: its status and token. */
  const login = async (gw: Service, user: string) => {
    const res = await fetch(`${gw.url}/auth/v1.0`, {
      headers: { 'X-Auth-User': user, 'X-Auth-Key': PW },
      signal: AbortSignal.timeout(5000),
    });
    return { status: res.status, token: res.headers.get('x-auth-token') ?? '', body: await res.text() };
  };
  let serviceToken = '';
  /** A V3 validation of `token` by the Swift proxy's service user: 200 valid, 404 not. */
  const validate = async (gw: Service, token: string) =>
    (
      await fetch(`${gw.url}/auth/v3/auth/tokens`, {
        headers: { 'X-Auth-Token': serviceToken, 'X-Subject-Token': token },
        signal: AbortSignal.timeout(5000),
      })
    ).status;
  const readyz = async (gw: Service) => {
    const res = await fetch(`${gw.url}/readyz`, { signal: AbortSignal.timeout(5000) });
    return { status: res.status, body: (await res.json()) as Record<string, string> };
  };

  beforeAll(async () => {
    try {
      await pg.start();
      await pg.query('primary', 'CREATE DATABASE cairn');
      await redis.start();
      api = await launchApi(pg.url('primary', 'cairn'));
      started.push(api);
      await pg.caughtUp();
      const region = {
        CAIRN_PRIMARY_DATABASE_URL: pg.url('primary', 'cairn'),
        CAIRN_STANDBY_MAX_LAG: String(MAX_LAG_S),
        CAIRN_S3_SECRET_KEYS: `k1:${randomBytes(32).toString('base64')}`,
        // The trials refuse the same few users hundreds of times: not what the login limits are about.
        CAIRN_LOGIN_FAILURE_LIMIT: '100000',
        CAIRN_LOGIN_ADDRESS_FAILURE_LIMIT: '1000000',
        CAIRN_LOGIN_USER_FAILURE_LIMIT: '10000000',
      };
      refusing = await launchGateway(pg.url('standby', 'cairn'), redis.url, region);
      started.push(refusing);
      serving = await launchGateway(pg.url('standby', 'cairn'), redis.url, { ...region, CAIRN_STANDBY_STALE: 'serve' });
      started.push(serving);
      await createUser('swift-proxy', { is_superuser: true });
      await until(
        'the service user logs in through the standby',
        async () => (await login(refusing, 'swift-proxy')).status === 200,
      );
      const res = await fetch(`${refusing.url}/auth/v3/auth/tokens`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          auth: {
            identity: {
              methods: ['password'],
              password: { user: { name: 'swift-proxy', domain: { id: 'default' }, password: PW } },
            },
          },
        }),
      });
      serviceToken = res.headers.get('x-subject-token') ?? '';
    } catch (e) {
      for (const s of started) await s.kill();
      await redis.destroy();
      await pg.destroy();
      throw e;
    }
  }, 120_000);
  afterAll(async () => {
    for (const s of started.reverse()) await s.stop();
    await redis.destroy();
    await pg.destroy();
  });

  it('when the gateway starts on the standby, then /readyz shows its lag under the limit and the gateway follows the change log there', async () => {
    const ready = await readyz(refusing);
    expect(ready.status).toBe(200);
    expect(ready.body.standby).toMatch(/^ok, lag \d+\.\d s$/);
    const metrics = await (await fetch(`${refusing.url}/metrics`)).text();
    expect(metrics).toMatch(/^cairn_standby_lag_seconds(\{[^}]*\})? \d/m);
    expect(metrics).toMatch(/^cairn_standby_stale(\{[^}]*\})? 0$/m);
  });

  it('when a user is created on the primary, then it logs in through the standby gateway as soon as the standby has replayed it', async () => {
    const t0 = Date.now();
    await createUser('newcomer');
    const ms = await until(
      'the new user logs in',
      async () => (await login(refusing, 'newcomer')).status === 200,
      5000,
    );
    process.stdout.write(
      `regions: a user created on the primary logged in through the standby's gateway after ${Date.now() - t0} ms (${ms} ms after the POST answered)\n`,
    );
  });

  it('when a user is disabled on the primary, 100 times over, then every trial ends refused (login 401, token 404), in effect within 1 s at p99 of the PATCH', async () => {
    const users = ['trial-0', 'trial-1', 'trial-2', 'trial-3'];
    const ids = await Promise.all(users.map((u) => createUser(u)));
    /**
     * Per trial: ms from sending the PATCH to the start of the first request refused (login and token both), and to its
     * answer.
     */
    const effect: number[] = [];
    const answered: number[] = [];
    /** Per trial: ms from sending the PATCH until the standby itself shows the user disabled. */
    const replayed: number[] = [];
    const standby = knex({ client: 'pg', connection: pg.url('standby', 'cairn'), pool: { min: 1, max: 2 } });
    const trial = async (i: number, first: boolean) => {
      const [user, id] = [users[i]!, ids[i]!];
      if (!first) await patchUser(id, { enabled: true });
      let token = '';
      await until(`${user} logs in again`, async () => {
        const l = await login(refusing, user);
        token = l.token;
        return l.status === 200;
      });
      expect(await validate(refusing, token)).toBe(200);
      const t0 = Date.now();
      const patched = patchUser(id, { enabled: false });
      void (async () => {
        for (;;) {
          const row = (await standby('storage_users').where({ id }).first('enabled')) as { enabled: boolean };
          if (!row.enabled) return replayed.push(Date.now() - t0);
          await sleep(2);
        }
      })();
      await patched;
      // A refused login costs a full password check (the new generation is not in the verifier's
      // cache), so what counts is when the first refused request was sent.
      // Two loops of their own: a slow refused login must not hold the token checks back.
      const firstRefused = async (what: string, refused: () => Promise<boolean>) => {
        const deadline = Date.now() + 5000;
        for (;;) {
          const sent = Date.now();
          if (await refused()) return sent;
          if (Date.now() > deadline) throw new Error(`trial of ${user}: ${what} not refused within 5 s`);
          await sleep(5);
        }
      };
      const [loginAt, tokenAt] = await Promise.all([
        firstRefused('login', async () => (await login(refusing, user)).status === 401),
        firstRefused('token', async () => (await validate(refusing, token)) === 404),
      ]);
      effect.push(Math.max(loginAt, tokenAt) - t0);
      answered.push(Date.now() - t0);
    };
    // Two lanes of two users each, 50 trials per lane: the password checks keep the test's length.
    await Promise.all(
      [0, 1].map(async (lane) => {
        for (let k = 0; k < 50; k++) await trial(2 * lane + (k % 2), k < 2);
      }),
    );
    const line = (xs: number[]) => {
      const sorted = [...xs].sort((a, b) => a - b);
      return `min ${sorted[0]} p50 ${percentile(sorted, 50)} p90 ${percentile(sorted, 90)} p99 ${percentile(sorted, 99)} max ${sorted.at(-1)}`;
    };
    await standby.destroy();
    process.stdout.write(
      `regions: disabled on the primary -> refused by the standby's gateway (login 401 and token 404), ${effect.length} trials, ms from sending the PATCH: the standby shows it ${line(replayed)}; first refused request sent ${line(effect)}; its answer ${line(answered)}\n`,
    );
    expect(effect).toHaveLength(100);
    expect(
      percentile(
        [...effect].sort((a, b) => a - b),
        99,
      ),
    ).toBeLessThanOrEqual(1000);
  }, 150_000);

  it('when replay is paused on the standby, then the lag grows, the refusing gateway answers 503 within lag limit + 1 s and /readyz says why, the serving one carries on (an S3 credential it deleted stays deleted); resumed, both catch up by themselves and a change made meanwhile applies', async () => {
    const id = await createUser('paused-user');
    await until('paused-user logs in', async () => (await login(refusing, 'paused-user')).status === 200);
    const { token } = await login(serving, 'paused-user');
    // An S3 credential made through the gateway (written on the primary), in use once replayed.
    const ec2 = `${serving.url}/auth/v3/users/paused-user/credentials/OS-EC2`;
    const made = await fetch(ec2, {
      method: 'POST',
      headers: { 'X-Auth-Token': token, 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(made.status).toBe(201);
    const { access, secret } = ((await made.json()) as { credential: { access: string; secret: string } }).credential;
    const s3tokens = async () =>
      (
        await fetch(`${serving.url}/auth/v3/s3tokens`, {
          method: 'POST',
          headers: { 'X-Auth-Token': serviceToken, 'Content-Type': 'application/json' },
          body: JSON.stringify(signedBody(access, secret)),
        })
      ).status;
    await until('the new credential signs through the standby', async () => (await s3tokens()) === 200);
    const pausedAt = Date.now();
    await pg.query('standby', 'SELECT pg_wal_replay_pause()');
    // Whatever fails below, the next test needs replay running.
    const resume = () => pg.query('standby', 'SELECT pg_wal_replay_resume()');
    try {
      // The owner deletes its credential through the gateway: the standby still has it, the gateway
      // knows it is gone.
      expect((await fetch(`${ec2}/${access}`, { method: 'DELETE', headers: { 'X-Auth-Token': token } })).status).toBe(
        204,
      );
      expect(await s3tokens()).toBe(401);
      expect(
        await pg.query('standby', `SELECT 1 FROM s3_credentials WHERE access_key = '${access}'`, 'cairn'),
      ).toHaveLength(1);
      // A change the standby does not replay yet.
      await patchUser(id, { enabled: false });
      const refusedAfter = await until(
        'the refusing gateway answers 503',
        async () => (await login(refusing, 'paused-user')).status === 503,
        (MAX_LAG_S + 3) * 1000,
      );
      const refusedMs = Date.now() - pausedAt;
      process.stdout.write(
        `regions: replay paused -> the refusing gateway answered 503 after ${refusedMs} ms (limit ${MAX_LAG_S} s)\n`,
      );
      expect(refusedMs).toBeLessThanOrEqual((MAX_LAG_S + 1) * 1000);
      expect(refusedAfter).toBeGreaterThan(0);
      const v1 = await login(refusing, 'paused-user');
      expect(v1.status).toBe(503);
      expect(v1.body).toMatch(/behind the primary/);
      const ready = await readyz(refusing);
      expect(ready.status).toBe(503);
      expect(ready.body.standby).toMatch(/^stale, lag \d+\.\d s over the 2\.0 s limit: refusing logins/);
      expect(await (await fetch(`${refusing.url}/metrics`)).text()).toMatch(/^cairn_standby_stale(\{[^}]*\})? 1$/m);
      // The serving gateway keeps answering from its copy, and says so.
      expect((await login(serving, 'paused-user')).status).toBe(200);
      expect(await validate(serving, token)).toBe(200);
      const servingReady = await readyz(serving);
      expect(servingReady.status).toBe(200);
      expect(servingReady.body.standby).toMatch(/^stale, .* serving the copy as it is/);
    } catch (e) {
      await resume();
      throw e;
    }
    await resume();
    const resumedAt = Date.now();
    await until(
      'the serving gateway applies the change made meanwhile',
      async () => (await validate(serving, token)) === 404 && (await login(serving, 'paused-user')).status === 401,
      5000,
    );
    await until(
      'the refusing gateway serves again',
      async () => (await readyz(refusing)).status === 200 && (await login(refusing, 'swift-proxy')).status === 200,
      5000,
    );
    process.stdout.write(`regions: replay resumed -> both gateways current again after ${Date.now() - resumedAt} ms\n`);
    expect((await login(refusing, 'paused-user')).status).toBe(401);
  }, 60_000);

  it('when the primary is stopped (the link cut), then logins and validations continue from the standby as configured, writes answer a clear 503, and after it returns the gateways recover without a restart', async () => {
    await createUser('cut-user');
    await until('cut-user logs in', async () => (await login(refusing, 'cut-user')).status === 200);
    const { token } = await login(serving, 'cut-user');
    const cutAt = Date.now();
    await pg.ctl('primary', 'stop');
    // Within the limit, both serve from the standby.
    expect((await login(refusing, 'cut-user')).status).toBe(200);
    expect((await login(serving, 'cut-user')).status).toBe(200);
    expect(await validate(serving, token)).toBe(200);
    // A write needs the primary: a clear 503.
    const ec2 = await fetch(`${serving.url}/auth/v3/users/cut-user/credentials/OS-EC2`, {
      method: 'POST',
      headers: { 'X-Auth-Token': token, 'Content-Type': 'application/json' },
      body: '{}',
      signal: AbortSignal.timeout(15_000),
    });
    expect(ec2.status).toBe(503);
    expect(((await ec2.json()) as { error: { message: string } }).error.message).toMatch(
      /primary database .* unreachable/,
    );
    // Past the limit: the refusing gateway stops, the serving one carries on.
    await until(
      'the refusing gateway answers 503',
      async () => (await login(refusing, 'cut-user')).status === 503,
      (MAX_LAG_S + 3) * 1000,
    );
    const refusedMs = Date.now() - cutAt;
    expect(refusedMs).toBeLessThanOrEqual((MAX_LAG_S + 1) * 1000 + 1500);
    let served = 0;
    while (Date.now() - cutAt < (MAX_LAG_S + 3) * 1000) {
      expect((await login(serving, 'cut-user')).status).toBe(200);
      expect(await validate(serving, token)).toBe(200);
      served++;
      await sleep(100);
    }
    process.stdout.write(
      `regions: primary stopped -> refusing gateway 503 after ${refusedMs} ms; serving gateway answered ${served} logins and validations, the last ${Date.now() - cutAt} ms into the cut\n`,
    );

    await pg.ctl('primary', 'start');
    const backAt = Date.now();
    await until(
      'the refusing gateway serves again',
      async () => (await login(refusing, 'cut-user')).status === 200,
      20_000,
    );
    process.stdout.write(
      `regions: primary started -> the refusing gateway served again after ${Date.now() - backAt} ms\n`,
    );
    // Writes and new users flow again, through the standby.
    await until(
      'the API writes again',
      async () => (await adminCall('GET', '/api/v1/users/?limit=1').catch(() => null))?.status === 200,
      20_000,
    );
    await createUser('after-cut');
    await until(
      'a user created after the cut logs in',
      async () => (await login(refusing, 'after-cut')).status === 200,
      5000,
    );
  }, 90_000);
});
