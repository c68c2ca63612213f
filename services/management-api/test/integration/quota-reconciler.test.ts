import { createDatabase } from '../../src/db/database';
import { createLogger } from '../../src/deps';
import { wantQuotas } from '../../src/repositories/quotas';
import { QuotaReconciler, type QuotaReconcilerOptions } from '../../src/services/quota-reconciler';
import { ADMIN_AUTH, DB_KINDS, cheapHashPassword, createUser, startTestApp, type TestApp } from '../support/harness';
import { startStandInSwift, type StandInSwift } from '../support/stand-in-swift';

/**
 * The quota reconciler against a stand-in Swift (test/support/stand-in-swift.ts), on Postgres and
 * on PGlite: changes reach Swift within seconds, status and audit follow, drift is put back,
 * outages are retried, and on Postgres one replica leads at a time.
 */
const RESYNC_MS = 600;

describe.each(DB_KINDS)('quota reconciler on %s', (kind) => {
  let app: TestApp;
  let swift: StandInSwift;
  let reconciler: QuotaReconciler;
  let sessionUrl: string | undefined;

  const options = (extra: Partial<QuotaReconcilerOptions> = {}): QuotaReconcilerOptions => ({
    db: app.db,
    log: createLogger('silent'),
    credentials: { default: { user: swift.state.user, password: swift.state.password } },
    sessionUrl,
    resyncMs: RESYNC_MS,
    pollMs: 100,
    concurrency: 4,
    timeoutMs: 2000,
    ...extra,
  });

  beforeAll(async () => {
    swift = await startStandInSwift();
    app = await startTestApp(kind, { hashPassword: cheapHashPassword });
    sessionUrl = kind === 'postgres' ? String(app.db.client.config.connection.connectionString) : undefined;
    const res = await app
      .http()
      .patch('/api/v1/clusters/1/')
      .set('Authorization', ADMIN_AUTH)
      .send({ auth_url: swift.authUrl, storage_url: swift.storageUrl });
    expect(res.status).toBe(202);
    reconciler = new QuotaReconciler(options());
    reconciler.start();
  });
  afterAll(async () => {
    await reconciler.stop();
    await app.close();
    await swift.close();
  });

  const patch = (id: unknown, body: Record<string, unknown>) =>
    app
      .http()
      .patch(`/api/v1/users/${String(id)}/`)
      .set('Authorization', ADMIN_AUTH)
      .send(body);
  const user = async (id: unknown) =>
    (
      await app
        .http()
        .get(`/api/v1/users/${String(id)}/`)
        .set('Authorization', ADMIN_AUTH)
    ).body as Record<string, unknown>;
  /** What the reconciler wrote to an account, in order (a resync pass may HEAD it at any moment). */
  const writesTo = (account: string) =>
    swift.state.requests.filter((r) => r.account === account && r.method !== 'HEAD');
  /** The user once `done` holds, within `ms`. */
  async function until(
    id: unknown,
    done: (u: Record<string, unknown>) => boolean,
    ms = 5000,
  ): Promise<Record<string, unknown>> {
    const deadline = Date.now() + ms;
    for (;;) {
      const u = await user(id);
      if (done(u)) return u;
      if (Date.now() > deadline) throw new Error(`not reached within ${ms} ms: ${JSON.stringify(u)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const headersOf = (name: string) => Object.fromEntries(swift.state.accounts.get(`AUTH_${name}`) ?? []);
  /** Once `done` holds, within `ms`; else fails saying what was awaited. */
  async function eventually(what: string, done: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error(`${what}: not so within ${ms} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('when a quota is set, then Swift has it within 5 s (the missing account created), and the user says applied', async () => {
    const alice = await createUser(app, 'alice');
    const t0 = Date.now();
    await patch(alice.id, { quota_bytes: 10240 });
    const applied = await until(alice.id, (u) => u.quota_status === 'applied');
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(typeof applied.quota_applied_at).toBe('string');
    expect(applied.quota_error).toBeNull();
    expect(headersOf('alice')).toEqual({ 'x-account-meta-quota-bytes': '10240' });
    // Its writes: the POST, refused for want of the account, then the PUT that creates it.
    expect(writesTo('AUTH_alice').map((r) => r.method)).toEqual(['POST', 'PUT']);
    expect(
      (await app.http().get('/api/v1/clusters/1/').set('Authorization', ADMIN_AUTH)).body.quota_support,
    ).toMatchObject({ swift_version: '2.30.1', fields: ['quota_bytes'] });

    // Cleared: the header is removed (sent empty).
    await patch(alice.id, { quota_bytes: null });
    await until(alice.id, (u) => u.quota_status === 'applied' && swift.state.accounts.get('AUTH_alice')!.size === 0);
    expect(writesTo('AUTH_alice').at(-1)).toMatchObject({
      method: 'POST',
      headers: { 'x-account-meta-quota-bytes': '' },
    });
  });

  it('when a quota is changed in Swift behind Cairn, then it is put back within a resync period and the audit trail names the drift', async () => {
    const bob = await createUser(app, 'bob', { quota_bytes: 5000 });
    await until(bob.id, (u) => u.quota_status === 'applied');
    swift.state.accounts.get('AUTH_bob')!.set('x-account-meta-quota-bytes', '999999');
    // The audit record is written right after Swift accepted the repair.
    const deadline = Date.now() + 3 * RESYNC_MS + 2000;
    const drifts = () =>
      app
        .http()
        .get(`/api/v1/audit/?action=repair_quota_drift&target_id=${String(bob.id)}`)
        .set('Authorization', ADMIN_AUTH);
    let audit = await drifts();
    while (audit.body.objects.length === 0) {
      if (Date.now() > deadline) throw new Error('drift not repaired');
      await new Promise((r) => setTimeout(r, 50));
      audit = await drifts();
    }
    expect(headersOf('bob')['x-account-meta-quota-bytes']).toBe('5000');
    expect(audit.body.objects).toHaveLength(1);
    expect(audit.body.objects[0]).toMatchObject({
      operator: 'quota reconciler',
      target_name: 'bob',
      before: { quota_bytes: 999999 },
      after: { quota_bytes: 5000 },
    });
  });

  it('when Swift is unreachable, then pending users say so in one sentence, and the quota is applied once it is back', async () => {
    const carol = await createUser(app, 'carol');
    swift.state.down = true;
    try {
      await patch(carol.id, { quota_bytes: 1 });
      const failed = await until(carol.id, (u) => u.quota_status === 'error');
      expect(failed.quota_error).toMatch(
        /^Swift is unreachable at http:\/\/127\.0\.0\.1:\d+: .+; Cairn retries with backoff\.$/,
      );
    } finally {
      swift.state.down = false;
    }
    await until(carol.id, (u) => u.quota_status === 'applied', 10_000);
    expect(headersOf('carol')).toEqual({ 'x-account-meta-quota-bytes': '1' });
  });

  it('when the account was deleted in Swift and not yet reaped, then the status says so, and it is applied once reaped', async () => {
    const dave = await createUser(app, 'dave');
    swift.state.deleted.add('AUTH_dave');
    await patch(dave.id, { quota_bytes: 2 });
    const failed = await until(dave.id, (u) => u.quota_status === 'error');
    expect(failed.quota_error).toBe(
      'The Swift account AUTH_dave was deleted and is not yet reaped; the quotas are applied once Swift has reaped it.',
    );
    swift.state.deleted.delete('AUTH_dave');
    await until(dave.id, (u) => u.quota_status === 'applied', 10_000);
  });

  it("when a quota needs a newer Swift than the cluster's, then its status names the release; once Swift is 2.34, sysmeta headers apply it", async () => {
    // Accepted while the API does not know the cluster's Swift yet (no /info read).
    await reconciler.stop();
    await app.db('cluster_swift_info').delete();
    const erin = await createUser(app, 'erin', { quota_count: 3, quota_bytes: 100 });
    reconciler = new QuotaReconciler(options());
    reconciler.start();
    const failed = await until(erin.id, (u) => u.quota_status === 'error');
    expect(failed.quota_error).toBe(
      "Not supported by this Swift: The cluster's Swift 2.30.1 cannot enforce 'quota_count': object-count quotas need Swift 2.34 or later.",
    );
    swift.state.version = '2.34.0';
    try {
      // The next /info read (each resync period) lifts it.
      await until(erin.id, (u) => u.quota_status === 'applied', 3 * RESYNC_MS + RESYNC_MS * 4 + 5000);
      expect(headersOf('erin')).toEqual({ 'x-account-quota-bytes': '100', 'x-account-quota-count': '3' });
      const sent = writesTo('AUTH_erin').at(-1)!.headers;
      expect(sent).toEqual({
        'x-account-quota-bytes': '100',
        'x-account-meta-quota-bytes': '',
        'x-account-quota-count': '3',
        'x-account-quota-bytes-policy-gold': '',
        'x-account-quota-bytes-policy-silver': '',
        'x-account-quota-count-policy-gold': '',
        'x-account-quota-count-policy-silver': '',
      });
    } finally {
      swift.state.version = '2.30.1';
      // A running reconciler reads /info again only at its next resync: until then it would write
      // 2.34's headers to a 2.30 Swift. The next tests start from a reconciler that read 2.30.
      await reconciler.stop();
      reconciler = new QuotaReconciler(options());
      reconciler.start();
    }
  });

  it('when a cluster has no reseller credentials, then its pending users say so', async () => {
    const other = await app
      .http()
      .post('/api/v1/clusters/')
      .set('Authorization', ADMIN_AUTH)
      .send({ name: 'other', auth_url: swift.authUrl, storage_url: swift.storageUrl });
    expect(other.status).toBe(201);
    const res = await app.http().post('/api/v1/users/').set('Authorization', ADMIN_AUTH).send({
      cluster: other.body.resource_uri,
      user: 'gina',
      password: 'correct-horse-battery-staple',
      quota_bytes: 1,
    });
    expect(res.status).toBe(201);
    const failed = await until(res.body.id, (u) => u.quota_status === 'error');
    expect(failed.quota_error).toBe(
      "Cairn has no reseller credentials for the cluster 'other' (CAIRN_QUOTA_CREDENTIALS), so nothing applies its quotas.",
    );
  });

  it('when the poll is long, then a change still wakes the reconciler and reaches Swift within 5 s', async () => {
    // hank has a quota already applied, so the restarted reconciler's first pass ends with a HEAD of
    // his account (its drift check, after its read of what is pending).
    const hank = await createUser(app, 'hank', { quota_bytes: 1 });
    await until(hank.id, (u) => u.quota_status === 'applied');
    await reconciler.stop();
    const seen = swift.state.requests.length;
    reconciler = new QuotaReconciler(options({ pollMs: 60_000, resyncMs: 3_600_000 }));
    reconciler.start();
    try {
      // The first pass has read what is pending: from now on only a wake-up, not that pass nor the
      // minute-long poll, can apply a change within 5 s.
      await eventually('the first pass reached its drift check', () =>
        swift.state.requests.slice(seen).some((r) => r.method === 'HEAD' && r.account === 'AUTH_hank'),
      );
      const t0 = Date.now();
      if (kind === 'postgres') {
        // As another replica would: a separate connection, so only NOTIFY can tell this one.
        const replica = createDatabase({ url: sessionUrl, poolMax: 1 });
        try {
          await replica.transaction(async (trx) => {
            await trx('storage_users').where({ id: hank.id }).update({ quota_bytes: 4242 });
            await wantQuotas(trx, String(hank.id), 1);
          });
        } finally {
          await replica.destroy();
        }
      } else {
        await patch(hank.id, { quota_bytes: 4242 });
      }
      await until(hank.id, (u) => u.quota_status === 'applied');
      expect(Date.now() - t0).toBeLessThan(5000);
      expect(headersOf('hank')).toEqual({ 'x-account-meta-quota-bytes': '4242' });
    } finally {
      await reconciler.stop();
      reconciler = new QuotaReconciler(options());
      reconciler.start();
    }
  });

  if (kind === 'postgres') {
    it('when two replicas run the reconciler, then one leads; when it stops, the other takes over and applies changes', async () => {
      // The first replica (restarted by the test before) takes the lock before the second starts.
      await eventually('the first replica leads', () => reconciler.isLeader);
      /** The lock sessions of this database's reconcilers that tried the lock last and do not hold it. */
      const refusedSessions = async () =>
        (
          await app.db.raw<{ rows: Array<{ pid: number }> }>(
            `SELECT a.pid FROM pg_stat_activity a
              WHERE a.datname = current_database() AND a.application_name = 'cairn-quota-reconciler'
                AND a.state = 'idle' AND a.query LIKE 'SELECT pg_try_advisory_lock%'
                AND NOT EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.granted)`,
          )
        ).rows.map((r) => r.pid);
      const before = new Set(await refusedSessions());
      const second = new QuotaReconciler(options());
      second.start();
      try {
        // The second has asked for the lock and been refused: its answer is in, not merely awaited.
        await eventually('the second replica tried the lock', async () =>
          (await refusedSessions()).some((pid) => !before.has(pid)),
        );
        expect([reconciler.isLeader, second.isLeader]).toEqual([true, false]);
        await reconciler.stop();
        const frank = await createUser(app, 'frank', { quota_bytes: 77 });
        await until(frank.id, (u) => u.quota_status === 'applied');
        expect(second.isLeader).toBe(true);
      } finally {
        await second.stop();
        reconciler = new QuotaReconciler(options());
        reconciler.start();
      }
    });
  }
});
