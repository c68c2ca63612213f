import { createHash } from 'node:crypto';
import { Server } from 'node:http';
import request, { type Response } from 'supertest';
import { createApp } from '../../src/app';
import type { Deps } from '../../src/deps';
import {
  ADMIN,
  ADMIN_AUTH,
  countRows,
  createCluster,
  createOperator,
  DB_KINDS,
  startTestApp,
  type TestApp,
} from '../support/harness';
import { responseCheckerFor } from '../support/openapi-responses';

/**
 * The console's sessions over real HTTP, on Postgres and on PGlite (what `pnpm start` runs): the
 * cookie and its flags, what is stored, sign-out, revocation (also seen by a second app on the same
 * database, as another replica would), the idle and maximum lifetimes, the cross-site defences, and
 * the step-up that minting lasting credentials needs. Time passing is played by moving the
 * session's times back on the database's clock, which is the clock every decision reads.
 */
const COOKIE = 'cairn_console_session';
const STEP_UP_REQUIRED = 'step_up_required';
const idHash = (sessionId: string) => createHash('sha256').update(sessionId).digest();

function cookieOf(res: Response): { value: string; attributes: string[] } {
  const raw = ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith(`${COOKIE}=`));
  if (!raw) throw new Error(`no ${COOKIE} cookie in ${res.status} ${res.text}`);
  const [pair = '', ...attributes] = raw.split(';').map((s) => s.trim());
  return { value: pair.slice(COOKIE.length + 1), attributes };
}

interface SignedIn {
  cookie: string;
  csrf: string;
  sessionId: string;
  body: Record<string, unknown>;
  attributes: string[];
}

async function signIn(app: TestApp, auth = ADMIN_AUTH, headers: Record<string, string> = {}): Promise<SignedIn> {
  const res = await app.http().post('/api/v1/session/').set('Authorization', auth).set(headers);
  expect(res.status).toBe(201);
  const { value, attributes } = cookieOf(res);
  return {
    cookie: `${COOKIE}=${value}`,
    csrf: res.body.csrf_token as string,
    sessionId: value,
    body: res.body as Record<string, unknown>,
    attributes,
  };
}

const whoami = (app: TestApp, cookie: string) => app.http().get('/api/v1/whoami/').set('Cookie', cookie);

/** A write made as the console makes it: the cookie and the CSRF token. */
const write = (app: TestApp, s: SignedIn, method: 'post' | 'patch' | 'delete', path: string) =>
  app.http()[method](path).set('Cookie', s.cookie).set('X-Cairn-CSRF', s.csrf);

/** The operator types its key again. */
const stepUp = (app: TestApp, s: SignedIn, key: string = ADMIN.key) =>
  write(app, s, 'post', '/api/v1/session/step_up/').send({ api_key: key });

/** Moves a session's times `seconds` back, as if that much time had passed for them. */
async function age(app: TestApp, s: SignedIn, columns: string[], seconds: number): Promise<void> {
  const back = (c: string) => app.db.raw(`?? - ? * interval '1 second'`, [c, seconds]);
  await app
    .db('console_sessions')
    .where('id_hash', idHash(s.sessionId))
    .update(Object.fromEntries(columns.map((c) => [c, back(c)])));
}

/** Seconds from now to a column of the session, on the database's clock (negative: past). */
async function secondsUntil(app: TestApp, s: SignedIn, column: string): Promise<number> {
  const row = (await app
    .db('console_sessions')
    .where('id_hash', idHash(s.sessionId))
    .first(app.db.raw('extract(epoch from ?? - now())::float8 AS d', [column]))) as { d: number | string };
  return Number(row.d);
}

describe.each(DB_KINDS)('console sessions on %s', (kind) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(kind);
  });
  afterAll(() => app.close());

  it('when an operator signs in with its key, then 201 sets an HttpOnly, SameSite=Strict cookie for the whole origin, and only a hash of the id is stored', async () => {
    const s = await signIn(app);
    expect(s.attributes.map((a) => a.toLowerCase())).toEqual(
      expect.arrayContaining(['path=/', 'httponly', 'samesite=strict']),
    );
    // Plain HTTP with no trusted proxy: not Secure (the browser would drop it).
    expect(s.attributes.map((a) => a.toLowerCase())).not.toContain('secure');
    expect(s.sessionId).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(s.body).toMatchObject({
      operator: {
        name: ADMIN.name,
        role: 'admin',
        key_uri: expect.stringMatching(/^\/api\/v1\/operators\/\d+\/keys\/\d+\/$/),
      },
      idle_timeout: 1800,
    });
    expect(JSON.stringify(s.body)).not.toContain(ADMIN.key);
    expect(JSON.stringify(s.body)).not.toContain(s.sessionId);
    const rows = await app.db('console_sessions').select('id_hash');
    const hashes = rows.map((r: { id_hash: Buffer }) => Buffer.from(r.id_hash).toString('hex'));
    expect(hashes).toContain(createHash('sha256').update(s.sessionId).digest('hex'));
    expect(JSON.stringify(await app.db('console_sessions').select('*'))).not.toContain(s.sessionId);
    // The cookie alone now authenticates reads, and GET session/ tells who is signed in.
    const me = await whoami(app, s.cookie);
    expect(me.status).toBe(200);
    expect(me.body.key_uri).toBe((s.body.operator as { key_uri: string }).key_uri);
    const current = await app.http().get('/api/v1/session/').set('Cookie', s.cookie);
    expect(current.status).toBe(200);
    expect(current.body).toMatchObject({ operator: { name: ADMIN.name }, csrf_token: s.csrf });
    expect(current.headers['cache-control']).toBe('no-store');
  });

  it('when nobody is signed in, then GET session/ answers 200 with operator null; signing in with a cookie but no key is 401', async () => {
    const none = await app.http().get('/api/v1/session/');
    expect(none.status).toBe(200);
    expect(none.body).toEqual({ operator: null, resource_uri: '/api/v1/session/' });
    const bogus = await app
      .http()
      .get('/api/v1/session/')
      .set('Cookie', `${COOKIE}=${'x'.repeat(43)}`);
    expect(bogus.body.operator).toBeNull();
    const s = await signIn(app);
    const again = await app.http().post('/api/v1/session/').set('Cookie', s.cookie).set('X-Cairn-CSRF', s.csrf);
    expect(again.status).toBe(401);
    expect(again.body.error).toMatch(/Signing in takes the API key/);
    expect((await app.http().post('/api/v1/session/').set('Authorization', `ApiKey ${ADMIN.name}:wrong`)).status).toBe(
      401,
    );
  });

  it('when the operator signs out, then the cookie is cleared and stops working, and the audit trail has sign-in and sign-out without any secret', async () => {
    const s = await signIn(app);
    const out = await app.http().delete('/api/v1/session/').set('Cookie', s.cookie).set('X-Cairn-CSRF', s.csrf);
    expect(out.status).toBe(204);
    expect(cookieOf(out).value).toBe('');
    expect((await whoami(app, s.cookie)).status).toBe(401);
    expect((await whoami(app, s.cookie)).body.error).toMatch(/console session has ended/);
    const audit = await app.db('audit_log').whereIn('action', ['sign_in', 'sign_out']).orderBy('id');
    expect(audit.map((a: { action: string }) => a.action)).toEqual(expect.arrayContaining(['sign_in', 'sign_out']));
    const text = JSON.stringify(audit);
    for (const secret of [s.sessionId, s.csrf, ADMIN.key, createHash('sha256').update(s.sessionId).digest('hex')])
      expect(text).not.toContain(secret);
    expect(audit.find((a: { action: string }) => a.action === 'sign_out')).toMatchObject({
      target_type: 'sessions',
      operator_name: ADMIN.name,
    });
    // Signing out with only an API key: there is no session to end.
    expect((await app.http().delete('/api/v1/session/').set('Authorization', ADMIN_AUTH)).status).toBe(400);
  });

  it('when the key a session was opened with is revoked, then the session is refused at once, also by another replica on the same database', async () => {
    const auth = await createOperator(app, 'keyholder', 'admin');
    const s = await signIn(app, auth);
    const replica = await startSecondApp(app);
    try {
      expect((await whoami(replica, s.cookie)).status).toBe(200);
      const keyUri = (s.body.operator as { key_uri: string }).key_uri;
      expect((await app.http().delete(keyUri).set('Authorization', ADMIN_AUTH)).status).toBe(204);
      expect((await whoami(replica, s.cookie)).status).toBe(401);
      expect((await whoami(app, s.cookie)).status).toBe(401);
      expect(await app.db('console_sessions').where('id_hash', idHash(s.sessionId)).first()).toBeUndefined();
    } finally {
      await replica.close();
    }
  });

  it('when a session writes with its cookie, then it needs the X-Cairn-CSRF token and a same-origin request; an API key needs neither', async () => {
    const s = await signIn(app);
    const body = { name: 'csrf-probe', role: 'reader', clusters: [] };
    const noToken = await app.http().post('/api/v1/operators/').set('Cookie', s.cookie).send(body);
    expect(noToken.status).toBe(403);
    expect(noToken.body.error).toMatch(/X-Cairn-CSRF/);
    const wrongToken = await app
      .http()
      .post('/api/v1/operators/')
      .set('Cookie', s.cookie)
      .set('X-Cairn-CSRF', 'A'.repeat(43))
      .send(body);
    expect(wrongToken.status).toBe(403);
    const crossSite = await app
      .http()
      .post('/api/v1/operators/')
      .set('Cookie', s.cookie)
      .set('X-Cairn-CSRF', s.csrf)
      .set('Sec-Fetch-Site', 'cross-site')
      .send(body);
    expect(crossSite.status).toBe(403);
    expect(crossSite.body.error).toMatch(/another site/);
    expect(await app.db('operators').where({ name: 'csrf-probe' }).first()).toBeUndefined();
    expect((await stepUp(app, s)).status).toBe(200);
    const ok = await app
      .http()
      .post('/api/v1/operators/')
      .set('Cookie', s.cookie)
      .set('X-Cairn-CSRF', s.csrf)
      .set('Sec-Fetch-Site', 'same-origin')
      .send(body);
    expect(ok.status).toBe(201);
    // Reads need no token; an API-key request ignores the whole mechanism.
    expect(
      (await app.http().get('/api/v1/operators/').set('Cookie', s.cookie).set('Sec-Fetch-Site', 'cross-site')).status,
    ).toBe(200);
    const byKey = await app
      .http()
      .delete(`/api/v1/operators/${ok.body.id as number}/`)
      .set('Authorization', ADMIN_AUTH)
      .set('Sec-Fetch-Site', 'cross-site');
    expect(byKey.status).toBe(204);
  });

  it('when requests keep coming, then last_seen_at is written at most once a minute, not on every request', async () => {
    const s = await signIn(app);
    const seen = async () =>
      new Date(
        (await app.db('console_sessions').where('id_hash', createHash('sha256').update(s.sessionId).digest()).first())
          .last_seen_at as string,
      ).getTime();
    await app
      .db('console_sessions')
      .where('id_hash', createHash('sha256').update(s.sessionId).digest())
      .update({ last_seen_at: app.db.raw("now() - interval '30 seconds'") });
    const before = await seen();
    for (let i = 0; i < 5; i += 1) expect((await whoami(app, s.cookie)).status).toBe(200);
    expect(await seen()).toBe(before);
    await app
      .db('console_sessions')
      .where('id_hash', createHash('sha256').update(s.sessionId).digest())
      .update({ last_seen_at: app.db.raw("now() - interval '61 seconds'") });
    const stale = await seen();
    expect((await whoami(app, s.cookie)).status).toBe(200);
    expect(await seen()).toBeGreaterThan(stale + 60_000);
  });

  it('when a session is idle past CAIRN_CONSOLE_SESSION_IDLE_SECONDS, then it ends; while it is used, it lives on', async () => {
    const short = await startSecondApp(app, { consoleSessions: { idleSeconds: 120, maxSeconds: 3600 } });
    try {
      const s = await signIn(short);
      // Used after 110 idle seconds, twice: each use counts, so 220 seconds in it still lives.
      for (let i = 0; i < 2; i += 1) {
        await age(short, s, ['last_seen_at'], 110);
        expect((await whoami(short, s.cookie)).status).toBe(200);
        expect(await secondsUntil(short, s, 'last_seen_at')).toBeGreaterThan(-10);
      }
      await age(short, s, ['last_seen_at'], 121);
      const ended = await whoami(short, s.cookie);
      expect(ended.status).toBe(401);
      expect(ended.body.error).toMatch(/console session has ended/);
    } finally {
      await short.close();
    }
  });

  it('when a session reaches CAIRN_CONSOLE_SESSION_MAX_SECONDS, then it ends however busy it is', async () => {
    const short = await startSecondApp(app, { consoleSessions: { idleSeconds: 3600, maxSeconds: 120 } });
    try {
      const s = await signIn(short);
      const row = await short
        .db('console_sessions')
        .where('id_hash', idHash(s.sessionId))
        .first(short.db.raw('extract(epoch from expires_at - created_at)::float8 AS lifetime'));
      expect(Number((row as { lifetime: number | string }).lifetime)).toBe(120);
      // Signed in 100 seconds ago and busy: it lives; 121 seconds ago, used a moment ago: it has ended.
      await age(short, s, ['created_at', 'expires_at'], 100);
      expect((await whoami(short, s.cookie)).status).toBe(200);
      await age(short, s, ['created_at', 'expires_at'], 21);
      expect(await secondsUntil(short, s, 'last_seen_at')).toBeGreaterThan(-60);
      expect((await whoami(short, s.cookie)).status).toBe(401);
    } finally {
      await short.close();
    }
  });

  it('when the API trusts the proxy, then X-Forwarded-Proto https makes the cookie Secure; from an untrusted address it is ignored', async () => {
    const untrusted = await signIn(app, ADMIN_AUTH, { 'X-Forwarded-Proto': 'https' });
    expect(untrusted.attributes.map((a) => a.toLowerCase())).not.toContain('secure');
    const behindProxy = await startSecondApp(app, { trustProxy: ['loopback'] });
    try {
      const viaTls = await signIn(behindProxy, ADMIN_AUTH, { 'X-Forwarded-Proto': 'https' });
      expect(viaTls.attributes.map((a) => a.toLowerCase())).toEqual(
        expect.arrayContaining(['secure', 'httponly', 'samesite=strict', 'path=/']),
      );
      const plain = await signIn(behindProxy, ADMIN_AUTH, { 'X-Forwarded-Proto': 'http' });
      expect(plain.attributes.map((a) => a.toLowerCase())).not.toContain('secure');
    } finally {
      await behindProxy.close();
    }
  });

  it('when a session mints an API key or an operator without a step-up, then 403 step_up_required and nothing is made; after the key is typed again, it goes through; an API key needs no step-up', async () => {
    const s = await signIn(app);
    const keysBefore = await countRows(app.db, 'api_keys');
    const key = await write(app, s, 'post', '/api/v1/operators/1/keys/');
    expect(key.status).toBe(403);
    expect(key.body).toEqual({
      code: STEP_UP_REQUIRED,
      error: expect.stringMatching(/^Re-enter your API key to confirm this action/),
    });
    const op = await write(app, s, 'post', '/api/v1/operators/').send({
      name: 'stepless',
      role: 'admin',
      clusters: [],
    });
    expect(op.status).toBe(403);
    expect(op.body.code).toBe(STEP_UP_REQUIRED);
    expect(await countRows(app.db, 'api_keys')).toBe(keysBefore);
    expect(await app.db('operators').where({ name: 'stepless' }).first()).toBeUndefined();
    // Writes that mint nothing need no step-up.
    expect((await write(app, s, 'delete', '/api/v1/operators/999999/')).status).toBe(404);
    // Scripts and the CLI, with the key itself, are not concerned.
    expect((await app.http().post('/api/v1/operators/1/keys/').set('Authorization', ADMIN_AUTH)).status).toBe(201);

    const stepped = await stepUp(app, s);
    expect(stepped.status).toBe(200);
    expect(stepped.body).toMatchObject({ operator: { name: ADMIN.name }, step_up_timeout: 300, csrf_token: s.csrf });
    expect(Date.parse(stepped.body.stepped_up_until as string)).toBeGreaterThan(Date.now() + 200_000);
    const until = await secondsUntil(app, s, 'stepped_up_until');
    expect(until).toBeGreaterThan(290);
    expect(until).toBeLessThanOrEqual(300);
    expect((await app.http().get('/api/v1/session/').set('Cookie', s.cookie)).body.stepped_up_until).toBe(
      stepped.body.stepped_up_until,
    );
    const minted = await write(app, s, 'post', '/api/v1/operators/1/keys/');
    expect(minted.status).toBe(201);
    expect(
      (
        await app
          .http()
          .get('/api/v1/whoami/')
          .set('Authorization', `ApiKey ${ADMIN.name}:${minted.body.key as string}`)
      ).status,
    ).toBe(200);
    const created = await write(app, s, 'post', '/api/v1/operators/').send({
      name: 'stepped',
      role: 'reader',
      clusters: [],
    });
    expect(created.status).toBe(201);

    // Once the step-up has run out, minting is refused again.
    await age(app, s, ['stepped_up_until'], 301);
    const late = await write(app, s, 'post', `/api/v1/operators/${created.body.id as number}/keys/`);
    expect(late.status).toBe(403);
    expect(late.body.code).toBe(STEP_UP_REQUIRED);
  });

  it('when a session gives an operator more power (reader to admin, more clusters), then it needs a step-up; narrowing it does not', async () => {
    const cluster = await createCluster(app, `widen-${kind}`);
    const clusterUri = cluster.resource_uri as string;
    const s = await signIn(app);
    const made = await app
      .http()
      .post('/api/v1/operators/')
      .set('Authorization', ADMIN_AUTH)
      .send({ name: 'widened', role: 'reader', clusters: [clusterUri] });
    const uri = `/api/v1/operators/${made.body.id as number}/`;
    const patch = (body: object) => write(app, s, 'patch', uri).send(body);
    for (const body of [{ role: 'admin' }, { clusters: [] }, { clusters: [clusterUri, '/api/v1/clusters/1/'] }]) {
      const res = await patch(body);
      expect(res.status).toBe(403);
      expect(res.body.code).toBe(STEP_UP_REQUIRED);
    }
    expect(await app.db('operators').where({ name: 'widened' }).first('role')).toEqual({ role: 'reader' });
    // Same role and clusters, or fewer: nothing to confirm.
    expect((await patch({ role: 'reader', clusters: [clusterUri] })).status).toBe(202);
    expect((await stepUp(app, s)).status).toBe(200);
    expect((await patch({ role: 'admin', clusters: [] })).status).toBe(202);
    expect((await write(app, s, 'delete', uri)).status).toBe(204);
  });

  it("when the step-up is given a wrong key, another operator's key or none, then it is refused, the session lives on unconfirmed, and a good one is audited without any secret", async () => {
    const otherAuth = await createOperator(app, `other-${kind}`, 'admin');
    const otherKey = otherAuth.split(':')[1]!;
    const s = await signIn(app);
    for (const key of ['wrong-key-0123456789abcdefghijklmnopqrstuv', otherKey]) {
      const res = await stepUp(app, s, key);
      expect(res.status).toBe(403);
      expect(res.body.error).toMatch(/not an API key of operator 'root'/);
      expect(res.body.code).toBeUndefined();
    }
    const none = await write(app, s, 'post', '/api/v1/session/step_up/').send({});
    expect(none.status).toBe(400);
    expect(none.body.error).toMatch(/api_key is required/);
    // The session still works, unconfirmed.
    expect((await whoami(app, s.cookie)).status).toBe(200);
    expect((await write(app, s, 'post', '/api/v1/operators/1/keys/')).body.code).toBe(STEP_UP_REQUIRED);
    // A step-up belongs to a console session: with an API key there is nothing to confirm.
    const byKey = await app
      .http()
      .post('/api/v1/session/step_up/')
      .set('Authorization', ADMIN_AUTH)
      .send({ api_key: ADMIN.key });
    expect(byKey.status).toBe(400);
    // Like every cookie write, it needs the CSRF token.
    const noToken = await app
      .http()
      .post('/api/v1/session/step_up/')
      .set('Cookie', s.cookie)
      .send({ api_key: ADMIN.key });
    expect(noToken.status).toBe(403);

    const stepUps = () => app.db('audit_log').where({ action: 'step_up' }).orderBy('id');
    const before = (await stepUps()).length;
    expect((await stepUp(app, s)).status).toBe(200);
    const audit = await stepUps();
    expect(audit).toHaveLength(before + 1);
    expect(audit.at(-1)).toMatchObject({ operator_name: ADMIN.name, target_type: 'sessions' });
    const text = JSON.stringify(audit.at(-1));
    for (const secret of [s.sessionId, s.csrf, ADMIN.key, idHash(s.sessionId).toString('hex')])
      expect(text).not.toContain(secret);
    expect(text).toContain((s.body.operator as { key_uri: string }).key_uri);
  });

  if (kind === 'pglite') {
    it('when a session asks for a backup of the embedded database, then it needs a step-up', async () => {
      const s = await signIn(app);
      const first = await write(app, s, 'post', '/api/v1/backup/');
      expect(first.status).toBe(403);
      expect(first.body.code).toBe(STEP_UP_REQUIRED);
      expect(await app.db('audit_log').where({ action: 'backup' }).first()).toBeUndefined();
      expect((await stepUp(app, s)).status).toBe(200);
      const backup = await write(app, s, 'post', '/api/v1/backup/')
        .buffer(true)
        .parse((res, done) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => done(null, Buffer.concat(chunks)));
        });
      expect(backup.status).toBe(200);
      expect(backup.headers['content-type']).toBe('application/gzip');
      expect(await app.db('audit_log').where({ action: 'backup' }).first()).toMatchObject({
        operator_name: ADMIN.name,
      });
    });
  }

  it("when a session writes with an Origin other than the API's own, then 403; its own origin passes, as a trusted proxy reports it", async () => {
    const s = await signIn(app);
    // A write that passes the checks answers 404 (no such operator); a refused one 403.
    const probe = (target: TestApp, t: SignedIn, headers: Record<string, string>) =>
      write(target, t, 'delete', '/api/v1/operators/999999/').set(headers);
    expect((await probe(app, s, { Origin: app.baseUrl })).status).toBe(404);
    for (const origin of ['http://evil.example', 'null', app.baseUrl.replace('http:', 'https:'), `${app.baseUrl}0`]) {
      const res = await probe(app, s, { Origin: origin });
      expect(res.status).toBe(403);
      expect(res.body.error).toMatch(/another site/);
    }
    // No Origin: Sec-Fetch-Site decides when the browser sends it.
    expect((await probe(app, s, { 'Sec-Fetch-Site': 'same-site' })).status).toBe(403);
    expect((await probe(app, s, { 'Sec-Fetch-Site': 'same-origin' })).status).toBe(404);
    // Reads are not concerned, nor requests made with the key.
    expect((await whoami(app, s.cookie).set('Origin', 'http://evil.example')).status).toBe(200);
    expect(
      (
        await app
          .http()
          .delete('/api/v1/operators/999999/')
          .set('Authorization', ADMIN_AUTH)
          .set('Origin', 'http://evil.example')
      ).status,
    ).toBe(404);
    // Forwarded headers count only from a proxy named in CAIRN_TRUST_PROXY.
    const forwarded = { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'console.example.com' };
    const spoofed = await probe(app, s, { ...forwarded, Origin: 'https://console.example.com' });
    expect(spoofed.status).toBe(403);
    const behindProxy = await startSecondApp(app, { trustProxy: ['loopback'] });
    try {
      const t = await signIn(behindProxy);
      expect((await probe(behindProxy, t, { ...forwarded, Origin: 'https://console.example.com' })).status).toBe(404);
      expect((await probe(behindProxy, t, { ...forwarded, Origin: 'https://console.example.com:443' })).status).toBe(
        404,
      );
      expect((await probe(behindProxy, t, { ...forwarded, Origin: behindProxy.baseUrl })).status).toBe(403);
    } finally {
      await behindProxy.close();
    }
  });
});

/**
 * A second app on the same database: another replica, with its own caches, and `extra` settings
 * (lifetimes, trusted proxies) where a test needs others than the first app's. Its answers are
 * checked against the OpenAPI document as the first app's are.
 */
async function startSecondApp(first: TestApp, extra: Partial<Deps> = {}): Promise<TestApp> {
  const server = new Server(createApp({ ...first.deps, ...extra }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const checker = responseCheckerFor(await (await fetch(`${baseUrl}/api/v1/openapi.json`)).text());
  return {
    ...first,
    deps: { ...first.deps, ...extra },
    baseUrl,
    http: () => request.agent(baseUrl).use(checker.plugin()),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
