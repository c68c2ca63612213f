import { createHash } from 'node:crypto';
import { Server } from 'node:http';
import request, { type Response } from 'supertest';
import { createApp } from '../../src/app';
import { ADMIN, ADMIN_AUTH, countRows, createOperator, startTestApp, type TestApp } from '../support/harness';

/**
 * The console's sessions over real HTTP on a real Postgres: the cookie and its flags, what is
 * stored, sign-out, revocation (also seen by a second app on the same database, as another
 * replica would), the idle and maximum lifetimes, and the CSRF defences.
 */
const COOKIE = 'cairn_console_session';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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

describe('console sessions', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp('postgres');
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
    const other = await startTestApp('postgres');
    try {
      const auth = await createOperator(other, 'keyholder', 'admin');
      const s = await signIn(other, auth);
      const replica = await startSecondApp(other);
      try {
        expect((await whoami(replica, s.cookie)).status).toBe(200);
        const keyUri = (s.body.operator as { key_uri: string }).key_uri;
        expect((await other.http().delete(keyUri).set('Authorization', ADMIN_AUTH)).status).toBe(204);
        expect((await whoami(replica, s.cookie)).status).toBe(401);
        expect((await whoami(other, s.cookie)).status).toBe(401);
        expect(await countRows(other.db, 'console_sessions')).toBe(0);
      } finally {
        await replica.close();
      }
    } finally {
      await other.close();
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
    const short = await startTestApp('postgres', { consoleSessions: { idleSeconds: 2, maxSeconds: 3600 } });
    try {
      const s = await signIn(short);
      for (let i = 0; i < 6; i += 1) {
        await sleep(600);
        expect((await whoami(short, s.cookie)).status).toBe(200);
      }
      await sleep(2300);
      expect((await whoami(short, s.cookie)).status).toBe(401);
    } finally {
      await short.close();
    }
  });

  it('when a session reaches CAIRN_CONSOLE_SESSION_MAX_SECONDS, then it ends however busy it is', async () => {
    const short = await startTestApp('postgres', { consoleSessions: { idleSeconds: 3600, maxSeconds: 2 } });
    try {
      const s = await signIn(short);
      expect((await whoami(short, s.cookie)).status).toBe(200);
      await sleep(1200);
      expect((await whoami(short, s.cookie)).status).toBe(200);
      await sleep(1200);
      expect((await whoami(short, s.cookie)).status).toBe(401);
    } finally {
      await short.close();
    }
  });

  it('when the API trusts the proxy, then X-Forwarded-Proto https makes the cookie Secure; from an untrusted address it is ignored', async () => {
    const untrusted = await signIn(app, ADMIN_AUTH, { 'X-Forwarded-Proto': 'https' });
    expect(untrusted.attributes.map((a) => a.toLowerCase())).not.toContain('secure');
    const behindProxy = await startTestApp('postgres', { trustProxy: ['loopback'] });
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
});

/** A second app on the same database: another replica, with its own caches. */
async function startSecondApp(first: TestApp): Promise<TestApp & { close: () => Promise<void> }> {
  const server = new Server(createApp({ ...first.deps }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    ...first,
    baseUrl,
    http: () => request.agent(baseUrl),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
