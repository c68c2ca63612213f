/**
 * @slow: the previous release built, started and upgraded (jest.sequencer.js starts it first)
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import knex, { type Knex } from 'knex';
import * as api from '@cairn/management-api';
import { startStandInSwift, type StandInSwift } from '../../services/management-api/test/support/stand-in-swift';
import { signedBody } from '../s3/s3-client';
import { REPO_ROOT, startService, type ServiceProcess } from '../support/processes';
import { builtRelease, runIn } from './built-release';
import {
  ABOVE_2_53,
  appCredLogin,
  call,
  differences,
  expectCall,
  HUGE,
  passwordLogin,
  readPaths,
  TIB,
  until,
  writeRows,
  type Answer,
} from './rows';
import { POSTGRES_ADMIN_URL as ADMIN_URL, REDIS_URL } from '../support/local-services';

/**
 * Upgrades without downtime (docs/releasing.md): during a rolling upgrade the previous release's
 * replicas keep running on the database this release's migrate job has migrated. This takes the
 * previous release's tree, builds it as a release is built (once per machine: built-release.ts
 * keeps the build for later runs), migrates a database
 * with this checkout's code, and runs the previous release's own smoke test
 * (test-e2e/upgrade/smoke.test.ts, on its built dist/) against that database. Then, on another
 * such database, this release's API and gateway write rows of every kind its schema holds, and the
 * previous release's API and gateway read them back and change some: each read must answer what
 * this release answers, and none a 5xx.
 *
 * The previous release: the newest `v*` tag that is an ancestor of HEAD (not HEAD itself), or,
 * where no tag exists, the last commit that changed package.json's `"version"` from one value to
 * another (on that commit itself: its parent, the previous version's last state; a version that
 * only appeared, with none before it, has no previous release, and the test fails saying so);
 * CAIRN_PREVIOUS_RELEASE=<commit or tag> names another (to check an upgrade from it by hand).
 */
const ADMIN_KEY = randomBytes(24).toString('base64url');
const AUTH = `ApiKey upgrade-admin:${ADMIN_KEY}`;
const S3_KEYS = `k1:${randomBytes(32).toString('base64')}`;

const git = (...args: string[]): string => execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8' }).trim();

function previousRelease(): { commit: string; name: string } | undefined {
  const given = process.env.CAIRN_PREVIOUS_RELEASE;
  if (given) return { commit: git('rev-parse', '--verify', `${given}^{commit}`), name: given };
  const head = git('rev-parse', 'HEAD');
  for (const tag of git('tag', '--list', 'v*', '--sort=-v:refname', '--merged', 'HEAD').split('\n').filter(Boolean)) {
    const commit = git('rev-list', '-n', '1', tag);
    if (commit !== head) return { commit, name: tag };
  }
  // Without tags, a release is a commit that changed "version" from one value to another. After
  // one, that commit is the previous release; on the release commit itself, the state just before
  // it is (the previous version's last commit). A version that only appeared, with none before it,
  // was never released.
  for (const change of git('log', '--format=%H', '-G"version"', 'HEAD', '--', 'package.json')
    .split('\n')
    .filter(Boolean)) {
    const parent = git('rev-list', '--parents', '-n', '1', change).split(' ')[1];
    const before = parent ? versionAt(parent) : undefined;
    const after = versionAt(change);
    if (before === after) continue;
    if (!before) return undefined;
    if (change !== head) return { commit: change, name: `${after} (commit ${change.slice(0, 12)})` };
    return { commit: parent!, name: `${before} (commit ${parent!.slice(0, 12)}, the last before ${after})` };
  }
  return undefined;
}

/** The root package.json's "version" at a commit, or undefined. */
function versionAt(commit: string): string | undefined {
  try {
    return (JSON.parse(git('show', `${commit}:package.json`)) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

const found = previousRelease();
const previous = found ?? { commit: '', name: 'the previous release' };

describe('upgrade: the previous release runs on a database migrated by this one', () => {
  /** The previous release's built tree (builtRelease). */
  let release: string;
  let admin: Knex;
  const databases: string[] = [];
  /** The previous release's migration list, to tell which row kinds it knows. */
  let previousMigrations = '';
  /** Whether the previous release has the migration named `name` (e.g. 'quotas'). */
  const knows = (name: string) => previousMigrations.includes(`_${name}'`);

  const run = (cmd: string, args: string[], env: Record<string, string> = {}) =>
    runIn(release, previous.name, cmd, args, env);

  /** A new database, migrated by this checkout's code; its URL. */
  const migratedDatabase = async (): Promise<string> => {
    const dbName = `cairn_upgrade_${process.pid}_${randomBytes(4).toString('hex')}`;
    databases.push(dbName);
    await admin.raw(`CREATE DATABASE ${dbName}`);
    const url = new URL(ADMIN_URL);
    url.pathname = `/${dbName}`;
    const db = api.createDatabase({ url: url.toString(), poolMax: 1 });
    try {
      await api.migrateLatest(db);
    } finally {
      await db.destroy();
    }
    return url.toString();
  };

  beforeAll(() => {
    // 1.0.0 is released, so a whole history always has a previous release: none means the history
    // was cut short, and the upgrade would go unchecked.
    if (!found)
      throw new Error(
        'No previous release in this history (no v* tag, and no commit that changed "version" in package.json): a shallow clone? Fetch the history (git fetch --unshallow), or name one with CAIRN_PREVIOUS_RELEASE=<tag or commit>.',
      );
    release = builtRelease(previous.commit, previous.name);
    admin = knex({ client: 'pg', connection: ADMIN_URL, pool: { min: 0, max: 1 } });
    previousMigrations = readFileSync(join(release, 'services/management-api/src/db/migrations/index.ts'), 'utf8');
  }, 1_200_000);
  afterAll(async () => {
    // Nothing to drop when the build failed before the connection was made.
    if (!found || admin === undefined) return;
    for (const dbName of databases) await admin.raw(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.destroy();
  });

  it(`when ${previous.name} runs its smoke test on this release's schema, then it passes`, async () => {
    if (!existsSync(join(release, 'test-e2e/upgrade/smoke.test.ts')))
      throw new Error(`${previous.name} has no test-e2e/upgrade/smoke.test.ts to run.`);
    const url = await migratedDatabase();

    // The path only: an option that takes a list (--selectProjects) would swallow it and run every suite.
    run(
      process.execPath,
      [
        '--experimental-vm-modules',
        'node_modules/jest/bin/jest.js',
        '--runInBand',
        '--runTestsByPath',
        'test-e2e/upgrade/smoke.test.ts',
      ],
      {
        CAIRN_SMOKE_DATABASE_URL: url,
        // Releases up to 1.0.0 ran their processes from dist/ only with this set (later ones always do).
        CAIRN_E2E_DIST: '1',
      },
    );
  }, 1_200_000);

  describe('rows this release wrote', () => {
    const running: ServiceProcess[] = [];
    let swift: StandInSwift | undefined;
    afterAll(async () => {
      await Promise.all(running.map((s) => s.stop()));
      await swift?.close();
    });
    /** One service of this release (root: REPO_ROOT) or of the previous one (its built tree). */
    const start = async (service: 'management-api' | 'auth-gateway', env: Record<string, string>, root = REPO_ROOT) => {
      const proc = await startService(service, env, 60_000, undefined, root);
      running.push(proc);
      return proc;
    };

    it(`when ${previous.name} reads and changes users with quotas, application credentials, S3 keys that expire or are bound, utilization, operators, sessions and audit records this release wrote, then it answers as this release does and never with a 5xx`, async () => {
      const url = await migratedDatabase();
      // Swift 2.34: every quota field (object counts, per policy) can be set and applied.
      swift = await startStandInSwift({ version: '2.34.1' });
      const shared = { DATABASE_URL: url, CAIRN_S3_SECRET_KEYS: S3_KEYS };
      const apiEnv = { ...shared, CAIRN_ADMIN_USER: 'upgrade-admin', CAIRN_ADMIN_KEY: ADMIN_KEY };
      const gatewayEnv = {
        ...shared,
        REDIS_URL,
        CAIRN_GATEWAY_CLUSTER: 'default',
        CAIRN_S3TOKENS_REQUIRE_SERVICE_TOKEN: 'false',
      };

      // This release writes.
      const newerApi = await start('management-api', apiEnv);
      const newerGateway = await start('auth-gateway', gatewayEnv);
      await expectCall(202, newerApi.url, 'PATCH', '/api/v1/clusters/1/', {
        auth: AUTH,
        body: { auth_url: swift.authUrl, storage_url: swift.storageUrl },
      });
      await expectCall(204, newerApi.url, 'PUT', '/api/v1/clusters/1/devices/', {
        auth: AUTH,
        body: {
          policies: [
            { index: 0, name: 'gold', default: true },
            { index: 1, name: 'Silver' },
          ],
          devices: [
            { node: '10.0.0.1:6200', device: 'sdb1', policies: ['gold'], used_bytes: 1e12, avail_bytes: 4e12 },
            { node: '10.0.0.2:6200', device: 'sdb1', policies: ['Silver'], used_bytes: 2e12, avail_bytes: 3e12 },
          ],
        },
      });
      // A second replica runs the quota reconciler (once the cluster's Swift is known), which
      // records Swift's /info and applies the quotas.
      const reconciling = await start('management-api', {
        ...apiEnv,
        CAIRN_QUOTA_CREDENTIALS: JSON.stringify({
          default: { user: swift.state.user, password: swift.state.password },
        }),
        CAIRN_QUOTA_POLL_MS: '100',
      });
      const clusterNow = () => call(newerApi.url, 'GET', '/api/v1/clusters/1/', { auth: AUTH });
      await until('the quota reconciler read /info', async () => (await clusterNow()).body.quota_support !== null);
      const w = await writeRows(newerApi.url, AUTH, newerGateway.url, (ids) =>
        until('the quotas are applied', async () => {
          const users = await Promise.all(
            ids.map((id) => call(newerApi.url, 'GET', `/api/v1/users/${id}/`, { auth: AUTH })),
          );
          return users.every((u) => u.body.quota_status === 'applied');
        }),
      );
      await reconciling.stop();
      const paths = readPaths(w);
      const newer = new Map<string, Answer>();
      for (const { path } of paths) {
        const res = await call(newerApi.url, 'GET', path, { auth: AUTH });
        expect({ path, status: res.status }).toEqual({ path, status: 200 });
        newer.set(path, res);
      }
      await newerApi.stop();
      await newerGateway.stop();

      // The previous release reads, on the same database and Redis (migrating at start, as a
      // replica of it restarting mid-upgrade does).
      const prevApi = await start('management-api', apiEnv, release);
      const prevGateway = await start('auth-gateway', gatewayEnv, release);
      const problems: string[] = [];
      for (const { path, needs } of paths) {
        const res = await call(prevApi.url, 'GET', path, { auth: AUTH });
        if (res.status >= 500) problems.push(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
        else if (!needs || knows(needs)) problems.push(...differences(path, newer.get(path)!, res));
      }
      expect(problems).toEqual([]);

      const u = w.users;
      const userAt = async (id: string) =>
        (await expectCall(200, prevApi.url, 'GET', `/api/v1/users/${id}/`, { auth: AUTH })).body;
      if (knows('quotas')) {
        expect(await userAt(u.quota.id)).toMatchObject({
          quota_bytes: HUGE,
          quota_count: 123_456,
          quota_bytes_policy: { gold: TIB, Silver: ABOVE_2_53 },
          quota_count_policy: { gold: 1000 },
          quota_status: 'applied',
          quota_error: null,
        });
        expect(await userAt(u.defaulted.id)).toMatchObject({
          quota_bytes: 5 * TIB,
          quota_count: 100_000,
          quota_bytes_policy: { gold: TIB },
          quota_count_policy: { Silver: 500 },
          quota_status: 'applied',
        });
        expect(await userAt(u.plain.id)).toMatchObject({ quota_bytes: null, quota_status: null });
        const cluster = (await expectCall(200, prevApi.url, 'GET', '/api/v1/clusters/1/', { auth: AUTH })).body;
        expect(cluster).toMatchObject({
          default_quota_bytes: 5 * TIB,
          default_quota_count: 100_000,
          default_quota_bytes_policy: { gold: TIB },
          default_quota_count_policy: { Silver: 500 },
          quota_support: { swift_version: '2.34.1' },
        });
      }
      // The reader operator's key and the console session this release opened.
      await expectCall(200, prevApi.url, 'GET', '/api/v1/users/', { auth: w.readerOperator.auth });
      await expectCall(403, prevApi.url, 'POST', '/api/v1/users/', {
        auth: w.readerOperator.auth,
        body: { cluster: '/api/v1/clusters/1/', user: 'not-by-a-reader', password: 'a-long-password-0123456789' },
      });
      const session = await expectCall(200, prevApi.url, 'GET', '/api/v1/session/', {
        headers: { Cookie: w.sessionCookie },
      });
      expect(session.body.operator).toMatchObject({ name: 'upgrade-admin' });
      await expectCall(200, prevApi.url, 'GET', '/api/v1/users/', { headers: { Cookie: w.sessionCookie } });

      // Its gateway: passwords (V1, V3), a disabled user, a token this release issued.
      const gw = prevGateway.url;
      const v1 = await call(gw, 'GET', '/auth/v1.0', {
        headers: { 'X-Auth-User': u.quota.name, 'X-Auth-Key': u.quota.password },
      });
      expect(v1.status).toBe(200);
      expect(v1.headers.get('x-storage-url')).toBe(`${swift.storageUrl}/AUTH_${u.quota.name}`);
      for (const user of [u.plain, u.quota, u.defaulted, u.apps])
        await expectCall(201, gw, 'POST', '/auth/v3/auth/tokens', { body: passwordLogin(user.name, user.password) });
      await expectCall(401, gw, 'POST', '/auth/v3/auth/tokens', {
        body: passwordLogin(u.disabled.name, u.disabled.password),
      });
      const serviceToken = (
        await expectCall(201, gw, 'POST', '/auth/v3/auth/tokens', {
          body: passwordLogin(u.service.name, u.service.password),
        })
      ).headers.get('x-subject-token')!;
      const validate = (subject: string) =>
        call(gw, 'GET', '/auth/v3/auth/tokens', {
          headers: {
            'X-Auth-Token': serviceToken,
            'X-Subject-Token': subject,
            'OpenStack-Identity-Access-Rules': '1',
          },
        });
      expect((await validate(w.quotaToken)).body.token).toMatchObject({ user: { name: u.quota.name } });

      // Expired: the short-lived key and credential have passed their expiry (checked, not assumed).
      await until('the short-lived key and credential expired', () => Date.now() > w.shortExpiry);
      const c = w.appCreds;
      const appLogin = (cred: { id: string; secret: string }) =>
        call(gw, 'POST', '/auth/v3/auth/tokens', { body: appCredLogin(cred.id, cred.secret) });
      const s3 = (key: { access: string; secret: string }) =>
        call(gw, 'POST', '/auth/v3/s3tokens', { body: signedBody(key.access, key.secret) });
      if (knows('application_credentials')) {
        const reader = await appLogin(c.reader);
        expect(reader.status).toBe(201);
        const readerToken = (await validate(reader.headers.get('x-subject-token')!)).body.token;
        expect(readerToken.application_credential).toMatchObject({
          id: c.reader.id,
          name: 'public-reader',
          restricted: true,
          access_rules: [{ service: 'object-store', method: 'GET', path: `/v1/AUTH_${u.apps.name}/public/**` }],
        });
        expect(Date.parse(readerToken.expires_at)).toBeLessThanOrEqual(c.reader.expiresAt!);
        expect((await appLogin(c.automation)).status).toBe(201);
        expect((await appLogin(c.expired)).status).toBe(401);
      } else {
        for (const cred of Object.values(c)) expect((await appLogin(cred)).status).toBeLessThan(500);
      }
      const ordinary = await s3(w.s3.ordinary);
      expect(ordinary.status).toBe(200);
      expect(ordinary.body.token.user.name).toBe(u.quota.name);
      const expiring = await s3(w.s3.expiring);
      expect(expiring.status).toBe(200);
      const expired = await s3(w.s3.expired);
      const bound = await s3(w.s3.bound);
      expect(bound.status).toBe(200);
      if (knows('s3_credential_lifetimes')) {
        expect(Date.parse(expiring.body.token.expires_at)).toBe(w.s3.expiring.expiresAt);
        expect(expired.status).toBe(401);
        expect(bound.body.token.application_credential).toEqual({
          id: c.automation.id,
          name: 'automation',
          restricted: false,
        });
      } else {
        // Documented (docs/releasing.md): a gateway without the lifetimes takes such keys for ordinary ones.
        expect(expired.status).toBe(200);
      }

      // The previous release changes those rows: a password change keeps the quotas, the user logs
      // in with the new password; deleting a user takes its credentials, keys and bound keys along.
      const newPassword = `${randomBytes(18).toString('base64url')}-new`;
      const patched = await expectCall(202, prevApi.url, 'PATCH', `/api/v1/users/${u.quota.id}/`, {
        auth: AUTH,
        body: { password: newPassword },
      });
      if (knows('quotas')) expect(patched.body).toMatchObject({ quota_bytes: HUGE, quota_count: 123_456 });
      await expectCall(201, gw, 'POST', '/auth/v3/auth/tokens', { body: passwordLogin(u.quota.name, newPassword) });
      await expectCall(204, prevApi.url, 'DELETE', `/api/v1/users/${u.apps.id}/`, { auth: AUTH });
      if (knows('application_credentials'))
        expect(
          (await call(prevApi.url, 'GET', '/api/v1/application_credentials/', { auth: AUTH })).body.objects,
        ).toEqual([]);
      await expectCall(401, gw, 'POST', '/auth/v3/s3tokens', {
        body: signedBody(w.s3.bound.access, w.s3.bound.secret),
      });
      expect((await appLogin(c.automation)).status).toBe(401);
      const audit = await expectCall(
        200,
        prevApi.url,
        'GET',
        `/api/v1/audit/?target_type=users&target_id=${u.apps.id}`,
        {
          auth: AUTH,
        },
      );
      expect(audit.body.objects.map((a: { action: string }) => a.action).sort()).toEqual(['create', 'delete']);
    }, 300_000);
  });
});
