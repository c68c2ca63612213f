/**
 * Quotas set in Cairn and enforced by a real Swift (Debian's 2.30): the proxy validates Cairn
 * tokens (authtoken + keystoneauth), speaks S3 (s3api + s3token) and runs `account_quotas` right
 * after keystoneauth. Cairn's quota reconciler applies quotas with a reseller token from the
 * gateway; the `swift` CLI and awscli then meet Swift's 413.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, QuotaReconciler } from '@cairn/management-api';
import { freePort } from '../support/processes';
import { ADMIN_AUTH, startStack, type Stack } from '../support/stack';
import { aws, ClientHome, type S3Key } from './s3-clients';
import { startSwiftCluster, swiftCli, type SwiftCluster } from './swift-cluster';

const SERVICE_PW = 'swift-service-password-01';
const RESELLER_PW = 'quota-reseller-password-01';
const ALICE_PW = 'alice-quota-password-00001';
const REGION = 'us-east-1';
const RESYNC_MS = 3000;
const KiB = 1024;

describe('quotas set through Cairn, enforced by a real Swift proxy', () => {
  let swift: SwiftCluster;
  let stack: Stack;
  let reconciler: QuotaReconciler;
  let gwAuth: string;
  let work: string;
  let home: ClientHome;
  let alice: { id: string };
  let aliceKey: S3Key;

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${stack.apiUrl}${path}`, {
      method,
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, any> };
  };
  /** Sets alice's quota through the API and waits until the reconciler says Swift has it (at most 5 s). */
  const setQuota = async (quota: number | null) => {
    const t0 = Date.now();
    expect((await api('PATCH', `/api/v1/users/${alice.id}/`, { quota_bytes: quota })).status).toBe(202);
    for (;;) {
      const u = (await api('GET', `/api/v1/users/${alice.id}/`)).body;
      if (u.quota_status === 'applied' && u.quota_bytes === quota) break;
      if (Date.now() - t0 > 5000) throw new Error(`quota not applied within 5 s: ${JSON.stringify(u)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const file = (name: string, size: number) => {
    writeFileSync(join(work, name), randomBytes(size));
    return name;
  };
  const swiftAs = (user: string, pw: string, args: string[]) =>
    swiftCli(['-A', `${gwAuth}/v1.0`, '-U', user, '-K', pw, ...args], {}, { cwd: work });
  /** The account's headers as the reseller sees them (a HEAD with a reseller token). */
  const head = async () => {
    const login = await fetch(`${gwAuth}/v1.0`, {
      headers: { 'X-Auth-User': 'quota-reseller', 'X-Auth-Key': RESELLER_PW },
    });
    const token = login.headers.get('x-auth-token')!;
    const res = await fetch(`${swift.proxyUrl}/v1/AUTH_alice`, { method: 'HEAD', headers: { 'X-Auth-Token': token } });
    expect(res.status).toBe(204);
    return { headers: res.headers, token };
  };

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'cairn-quotas-'));
    home = new ClientHome();
    const gwPort = await freePort();
    gwAuth = `http://127.0.0.1:${gwPort}/auth`;
    swift = await startSwiftCluster({
      pipeline: 'keystone',
      keystone: {
        authUrl: `${gwAuth}/v3`,
        username: 'swift-service',
        password: SERVICE_PW,
        projectName: 'swift-service',
        tokenCacheTime: 1,
        s3: { location: REGION, secretCacheDuration: 0 },
      },
      // account_quotas right after the auth middleware, as Swift's documentation places it.
      proxyPipeline: [
        'catch_errors',
        'gatekeeper',
        'healthcheck',
        'proxy-logging',
        'cache',
        'authtoken',
        's3api',
        's3token',
        'keystoneauth',
        'account_quotas',
        'proxy-logging',
        'proxy-server',
      ],
      extraProxyConfig: '[filter:account_quotas]\nuse = egg:swift#account_quotas\n',
    });
    stack = await startStack({
      database: 'postgres',
      redis: true,
      s3SecretKeys: `interop:${randomBytes(32).toString('base64')}`,
      gateway: { port: gwPort, publicUrl: gwAuth, storageUrl: `${swift.proxyUrl}/v1` },
    });
    expect(
      (await api('PATCH', '/api/v1/clusters/1/', { auth_url: gwAuth, storage_url: `${swift.proxyUrl}/v1` })).status,
    ).toBe(202);
    await stack.createUser('swift-service', SERVICE_PW, { is_superuser: true });
    await stack.createUser('quota-reseller', RESELLER_PW, { is_superuser: true });
    alice = await stack.createUser('alice', ALICE_PW);
    const cred = await api('POST', '/api/v1/s3_credentials/', { user: `/api/v1/users/${alice.id}/` });
    expect(cred.status).toBe(201);
    aliceKey = { access: cred.body.access_key, secret: cred.body.secret };
    // What `CAIRN_QUOTA_CREDENTIALS='{"default": {"user": "quota-reseller", …}}'` starts in the API process.
    reconciler = new QuotaReconciler({
      db: stack.db,
      log: createLogger('silent'),
      credentials: { default: { user: 'quota-reseller', password: RESELLER_PW } },
      sessionUrl: stack.databaseUrl,
      resyncMs: RESYNC_MS,
      pollMs: 1000,
      concurrency: 4,
      timeoutMs: 10_000,
    });
    reconciler.start();
    expect((await swiftAs('alice', ALICE_PW, ['post', 'files'])).code).toBe(0);
  });

  afterAll(async () => {
    await reconciler?.stop();
    await stack?.close();
    await swift?.stop();
    home?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('when a 10 KiB quota is set through Cairn, then the swift CLI gets 413 for 20 KiB and stores 5 KiB; raised, 20 KiB goes through', async () => {
    await setQuota(10 * KiB);
    expect((await head()).headers.get('x-account-meta-quota-bytes')).toBe(String(10 * KiB));
    const big = await swiftAs('alice', ALICE_PW, ['upload', 'files', file('big.bin', 20 * KiB)]);
    expect(big.code).not.toBe(0);
    expect(`${big.stdout}${big.stderr}`).toMatch(/413|Upload exceeds quota/);
    const small = await swiftAs('alice', ALICE_PW, ['upload', 'files', file('small.bin', 5 * KiB)]);
    expect(small.code).toBe(0);

    await setQuota(100 * KiB);
    const again = await swiftAs('alice', ALICE_PW, ['upload', 'files', 'big.bin']);
    if (again.code !== 0) swift.dumpLogs(40);
    expect(again.code).toBe(0);
  });

  it('when the quota is cleared through Cairn, then the account has no quota header', async () => {
    await setQuota(null);
    expect((await head()).headers.get('x-account-meta-quota-bytes')).toBeNull();
  });

  it('when an S3 upload (awscli through s3api) would go over the quota, then Swift refuses it', async () => {
    await setQuota(10 * KiB);
    const res = await aws(home, swift.proxyUrl, REGION, aliceKey, [
      's3',
      'cp',
      join(work, 'big.bin'),
      's3://files/over.bin',
    ]);
    expect(res.code).not.toBe(0);
    expect(`${res.stdout}${res.stderr}`).toMatch(/EntityTooLarge|413|Request Entity Too Large/);
    const fits = await aws(home, swift.proxyUrl, REGION, aliceKey, [
      's3',
      'cp',
      join(work, 'small.bin'),
      's3://files/fits.bin',
    ]);
    expect(fits.code).toBe(0);
  });

  it('when the quota is changed directly in Swift by a reseller, then Cairn puts it back within a resync period and audits the drift', async () => {
    await setQuota(10 * KiB);
    const { token } = await head();
    const drift = await fetch(`${swift.proxyUrl}/v1/AUTH_alice`, {
      method: 'POST',
      headers: { 'X-Auth-Token': token, 'X-Account-Meta-Quota-Bytes': '999999999' },
    });
    expect(drift.status).toBe(204);
    // No HEAD here to see the drift: a resync can repair it before that HEAD. The audit record's
    // "before" is what Cairn read in Swift, so it shows the drift took; it is written right after
    // Swift accepted the repair.
    const deadline = Date.now() + 2 * RESYNC_MS + 5000;
    let audit = await api('GET', `/api/v1/audit/?action=repair_quota_drift&target_id=${alice.id}`);
    while (audit.body.objects.length === 0) {
      if (Date.now() > deadline) throw new Error('drift not repaired');
      await new Promise((r) => setTimeout(r, 250));
      audit = await api('GET', `/api/v1/audit/?action=repair_quota_drift&target_id=${alice.id}`);
    }
    expect(audit.body.objects[0]).toMatchObject({
      operator: 'quota reconciler',
      before: { quota_bytes: 999999999 },
      after: { quota_bytes: 10 * KiB },
    });
    expect((await head()).headers.get('x-account-meta-quota-bytes')).toBe(String(10 * KiB));
  });

  it('when an object-count quota is asked of this Swift 2.30, then Cairn refuses it naming the release needed', async () => {
    const res = await api('PATCH', `/api/v1/users/${alice.id}/`, { quota_count: 10 });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(
      /^The cluster's Swift 2\.30\.\d+ cannot enforce 'quota_count': object-count quotas need Swift 2\.34 or later\.$/,
    );
  });
});
