/**
 * The gateway as real Swift software sees it: the `swift` CLI (python-swiftclient) authenticates
 * with V1, V2.0 and V3, and a real single-node Swift proxy validates every token through
 * keystonemiddleware (authtoken) and Swift's keystoneauth. Management API, gateway, Postgres and
 * Redis are real too.
 *
 * @slow: many swift CLI runs against a proxy (jest.sequencer.js starts it first)
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NEW_USERNAME_MAX_LENGTH } from '@cairn/domain';
import { freePort } from '../support/processes';
import { ADMIN_AUTH, startStack, type Stack } from '../support/stack';
import { startSwiftCluster, swiftCli, type SwiftCluster } from './swift-cluster';

const ALICE_PW = 'alice-interop-password-01';
const BOB_PW = 'bob-interop-password-0001';
const SERVICE_PW = 'swift-service-password-01';

// Python 3 Swift compares the account in the request path (UTF-8 bytes as a latin-1 "WSGI
// string") with the project id keystonemiddleware copies from the validation answer, so names
// beyond ASCII and names that need percent-encoding in the storage URL are tried end to end.
const NAMED_USERS = [
  ['zoë-interop', 'zoe-interop-password-0001'],
  ['Ærøskøbing ÿ©', 'aeroskobing-interop-password'],
  ["o'brien+tag@example.com", 'obrien-interop-password-1'],
  ['first last.name', 'first-last-interop-password'],
  ['what?#%41&x=1;y', 'what-interop-password-0001'],
  // The longest name the API accepts: AUTH_ + 251 characters is Swift's limit of 256.
  [`${'ü'.repeat(NEW_USERNAME_MAX_LENGTH - 1)}z`, 'longest-interop-password-01'],
] as const;

describe('the swift CLI and a Swift proxy with keystonemiddleware against the Cairn gateway', () => {
  let swift: SwiftCluster;
  let stack: Stack;
  let gwAuth: string;
  let work: string;
  let alice: { id: string };

  const v1 = (user: string, key: string) => ['-A', `${gwAuth}/v1.0`, '-U', user, '-K', key];
  const v2 = (user: string, key: string, tenant = user) => [
    '--auth-version',
    '2',
    '--os-auth-url',
    `${gwAuth}/v2.0`,
    '--os-username',
    user,
    '--os-password',
    key,
    '--os-tenant-name',
    tenant,
  ];
  const v3 = (user: string, key: string, project = user, domains = true) => [
    '--auth-version',
    '3',
    '--os-auth-url',
    `${gwAuth}/v3`,
    '--os-username',
    user,
    '--os-password',
    key,
    '--os-project-name',
    project,
    ...(domains ? ['--os-user-domain-id', 'default', '--os-project-domain-id', 'default'] : []),
  ];
  const cli = (args: string[], env: Record<string, string> = {}, cwd = work) => swiftCli(args, env, { cwd });
  const ok = async (args: string[], env: Record<string, string> = {}, cwd = work) => {
    const res = await cli(args, env, cwd);
    if (res.code !== 0) {
      swift.dumpLogs(80);
      throw new Error(`swift ${args.join(' ')} failed (${res.code}):\n${res.stdout}\n${res.stderr}`);
    }
    return res.stdout;
  };

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'cairn-interop-'));
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
      },
    });
    stack = await startStack({
      database: 'postgres',
      redis: true,
      gateway: { port: gwPort, publicUrl: gwAuth, storageUrl: `${swift.proxyUrl}/v1` },
    });
    await stack.createUser('swift-service', SERVICE_PW, { is_superuser: true });
    alice = await stack.createUser('alice', ALICE_PW);
    await stack.createUser('bob', BOB_PW);
    await stack.createUser('root', 'root-interop-password-001', { is_superuser: true });
    for (const [user, password] of NAMED_USERS) await stack.createUser(user, password);
  });

  afterAll(async () => {
    await stack?.close();
    await swift?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('when `swift auth` uses V1, then it prints the storage URL of AUTH_alice and a token', async () => {
    const out = await ok([...v1('alice', ALICE_PW), 'auth']);
    expect(out).toContain(`export OS_STORAGE_URL=${swift.proxyUrl}/v1/AUTH_alice\n`);
    expect(out).toMatch(/export OS_AUTH_TOKEN=\S{40,}/);
  });

  it('when `swift auth` uses V2 flags or OS_* variables, then the same storage URL', async () => {
    expect(await ok([...v2('alice', ALICE_PW), 'auth'])).toContain(
      `export OS_STORAGE_URL=${swift.proxyUrl}/v1/AUTH_alice\n`,
    );
    const env = {
      OS_AUTH_VERSION: '2',
      OS_AUTH_URL: `${gwAuth}/v2.0`,
      OS_USERNAME: 'alice',
      OS_PASSWORD: ALICE_PW,
      OS_TENANT_NAME: 'alice',
    };
    expect(await ok(['auth'], env)).toContain(`export OS_STORAGE_URL=${swift.proxyUrl}/v1/AUTH_alice\n`);
  });

  it('when `swift auth` uses V3 with and without domain options, then the same storage URL', async () => {
    expect(await ok([...v3('alice', ALICE_PW), 'auth'])).toContain(
      `export OS_STORAGE_URL=${swift.proxyUrl}/v1/AUTH_alice\n`,
    );
    expect(await ok([...v3('alice', ALICE_PW, 'alice', false), 'auth'])).toContain(
      `export OS_STORAGE_URL=${swift.proxyUrl}/v1/AUTH_alice\n`,
    );
    const env = {
      OS_AUTH_URL: `${gwAuth}/v3`,
      OS_USERNAME: 'alice',
      OS_PASSWORD: ALICE_PW,
      OS_PROJECT_NAME: 'alice',
      OS_USER_DOMAIN_NAME: 'Default',
      OS_PROJECT_DOMAIN_NAME: 'Default',
    };
    expect(await ok(['auth'], env)).toContain(`export OS_STORAGE_URL=${swift.proxyUrl}/v1/AUTH_alice\n`);
  });

  /**
   * A directory of its own for a test that runs concurrently with others (the swift CLI uploads
   * and downloads relative to its working directory, and the object names are the same).
   */
  const ownDir = (name: string) => mkdtempSync(join(work, `${name}-`));

  // Concurrent (jest's maxConcurrency, 5): each test is a handful of swift CLI runs, each mostly a
  // Python start, and each test has its own user, container or directory.
  it.concurrent.each([
    ['V1', () => v1('alice', ALICE_PW)],
    ['V2', () => v2('alice', ALICE_PW)],
    ['V3', () => v3('alice', ALICE_PW)],
  ])('when a %s token is used, then stat, upload, list and download work through the proxy', async (version, creds) => {
    const container = `box-${version.toLowerCase()}`;
    const file = `note-${version}.txt`;
    const content = `hello from ${version} ${Date.now()}\n`;
    const dir = ownDir(version);
    writeFileSync(join(dir, file), content);
    expect(await ok([...creds(), 'stat'], {}, dir)).toMatch(/Account: AUTH_alice/);
    await ok([...creds(), 'upload', container, file], {}, dir);
    expect((await ok([...creds(), 'list', container], {}, dir)).split('\n')).toContain(file);
    rmSync(join(dir, file));
    await ok([...creds(), 'download', container, file], {}, dir);
    expect(readFileSync(join(dir, file), 'utf8')).toBe(content);
  });

  // Each name logs in with every version (a login and an account HEAD through the proxy: the storage
  // URL each version's answer carries, percent-encoded or not), and does the whole round of
  // writes and reads with one of them, in turn: past the login the requests are the same whichever
  // version made the token, so the round needs no repeat per version (and each is a Python start).
  const VERSIONS = { V1: v1, V2: v2, V3: v3 } as const;
  const VERSION_NAMES = Object.keys(VERSIONS) as Array<keyof typeof VERSIONS>;
  const named = NAMED_USERS.map(([user, password], i) => {
    const round = VERSION_NAMES[i % VERSION_NAMES.length]!;
    return [user, round, (version: keyof typeof VERSIONS) => VERSIONS[version](user, password)] as const;
  });

  it.concurrent.each(named)(
    'when %j logs in with V1, V2 and V3, then each token stats the account, and its %s token uploads, lists and downloads',
    async (user, round, creds) => {
      const container = 'box-named';
      const file = 'named.txt';
      const content = `hello ${user} from ${round} ${Date.now()}\n`;
      const dir = ownDir('named');
      const account = `Account: ${encodeURIComponent(`AUTH_${user}`)}\n`;
      for (const version of VERSION_NAMES)
        expect({ version, stat: await ok([...creds(version), 'stat'], {}, dir) }).toEqual({
          version,
          stat: expect.stringContaining(account),
        });
      writeFileSync(join(dir, file), content);
      await ok([...creds(round), 'upload', container, file], {}, dir);
      expect((await ok([...creds(round), 'list', container], {}, dir)).split('\n')).toContain(file);
      rmSync(join(dir, file));
      await ok([...creds(round), 'download', container, file], {}, dir);
      expect(readFileSync(join(dir, file), 'utf8')).toBe(content);
    },
  );

  it('when a container ACL names a non-ASCII project, then that project reads it and others do not', async () => {
    const [[zoe, zoePw], [aero, aeroPw]] = NAMED_USERS;
    const zoeUrl = `${swift.proxyUrl}/v1/${encodeURIComponent(`AUTH_${zoe}`)}`;
    writeFileSync(join(work, 'shared.txt'), `for ${aero}\n`);
    await ok([...v3(zoe, zoePw), 'upload', 'shared', 'shared.txt']);
    const asAero = [...v1(aero, aeroPw), '--os-storage-url', zoeUrl, 'list', 'shared'];
    expect((await cli(asAero)).code).not.toBe(0);
    await ok([...v3(zoe, zoePw), 'post', '-r', `${aero}:*`, 'shared']);
    expect((await ok(asAero)).split('\n')).toContain('shared.txt');
    expect((await cli([...v1('bob', BOB_PW), '--os-storage-url', zoeUrl, 'list', 'shared'])).code).not.toBe(0);
  });

  it('when an account name has a character beyond Latin-1, then this Swift cannot create it, so the API refuses such user names', async () => {
    const rootToken = /export OS_AUTH_TOKEN=(\S+)/.exec(
      await ok([...v1('root', 'root-interop-password-001'), 'auth']),
    )![1]!;
    const putContainer = (account: string) =>
      fetch(`${swift.proxyUrl}/v1/${encodeURIComponent(`AUTH_${account}`)}/probe`, {
        method: 'PUT',
        headers: { 'X-Auth-Token': rootToken },
      });
    // Swift 2.30's account_autocreate fails on the decoded name (fixed in Swift 2.32); Latin-1 is fine.
    expect((await putContainer('用户-probe')).status).toBe(500);
    expect((await putContainer('zoë-probe')).status).toBe(201);
    const refused = await fetch(`${stack.apiUrl}/api/v1/users/`, {
      method: 'POST',
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        cluster: '/api/v1/clusters/1/',
        user: '用户-interop',
        password: 'yonghu-interop-password-01',
      }),
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toContain('beyond Latin-1');
  });

  it('when an account name is one character longer than the API allows, then the proxy itself refuses it', async () => {
    const rootToken = /export OS_AUTH_TOKEN=(\S+)/.exec(
      await ok([...v1('root', 'root-interop-password-001'), 'auth']),
    )![1]!;
    const account = async (name: string) => {
      const res = await fetch(`${swift.proxyUrl}/v1/${encodeURIComponent(`AUTH_${name}`)}`, {
        headers: { 'X-Auth-Token': rootToken },
      });
      return { status: res.status, body: await res.text() };
    };
    // Python 3 Swift counts characters, not bytes: 251 three-byte characters are fine, 252 are not.
    expect((await account('ü'.repeat(NEW_USERNAME_MAX_LENGTH))).status).toBeLessThan(300);
    expect(await account('ü'.repeat(NEW_USERNAME_MAX_LENGTH + 1))).toEqual({
      status: 400,
      body: 'Account name length of 257 longer than 256',
    });
    const refused = await fetch(`${stack.apiUrl}/api/v1/users/`, {
      method: 'POST',
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        cluster: '/api/v1/clusters/1/',
        user: 'ü'.repeat(NEW_USERNAME_MAX_LENGTH + 1),
        password: 'too-long-interop-password-1',
      }),
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toContain('at most 256 characters in an account name');
  });

  it("when alice tries to write into bob's account, then the proxy refuses", async () => {
    writeFileSync(join(work, 'intruder.txt'), 'x');
    const res = await cli([
      ...v1('alice', ALICE_PW),
      '--os-storage-url',
      `${swift.proxyUrl}/v1/AUTH_bob`,
      'upload',
      'stolen',
      'intruder.txt',
    ]);
    expect(res.code).not.toBe(0);
    expect(`${res.stdout}${res.stderr}`).toMatch(/403|Forbidden/);
    const asBobTenant = await cli([...v3('alice', ALICE_PW, 'bob'), 'upload', 'stolen', 'intruder.txt']);
    expect(asBobTenant.code).not.toBe(0);
    expect(`${asBobTenant.stdout}${asBobTenant.stderr}`).toMatch(/403|Forbidden/);
  });

  it("when a superuser lists another user's account, then it sees alice's containers", async () => {
    const out = await ok([
      ...v1('root', 'root-interop-password-001'),
      '--os-storage-url',
      `${swift.proxyUrl}/v1/AUTH_alice`,
      'list',
    ]);
    expect(out.split('\n')).toEqual(expect.arrayContaining(['box-v1', 'box-v2', 'box-v3']));
  });

  it('when alice is disabled, then new logins fail at once and her token stops working at the proxy', async () => {
    const token = /export OS_AUTH_TOKEN=(\S+)/.exec(await ok([...v1('alice', ALICE_PW), 'auth']))![1]!;
    const storage = ['--os-storage-url', `${swift.proxyUrl}/v1/AUTH_alice`, '--os-auth-token', token];
    await ok([...storage, 'list']);
    expect(await stack.patchUser(alice.id, { enabled: false })).toBe(202);
    const login = await cli([...v1('alice', ALICE_PW), 'auth']);
    expect(login.code).not.toBe(0);
    expect(login.stderr).toMatch(/401/);
    // keystonemiddleware may serve its cached validation for token_cache_time (1 s here).
    const deadline = Date.now() + 5_000;
    let refused = false;
    while (!refused && Date.now() < deadline) {
      const res = await cli([...storage, 'list']);
      refused = res.code !== 0 && /401|Unauthorized/.test(`${res.stdout}${res.stderr}`);
      if (!refused) await new Promise((r) => setTimeout(r, 250));
    }
    expect(refused).toBe(true);
    expect(await stack.patchUser(alice.id, { enabled: true })).toBe(202);
    await ok([...v1('alice', ALICE_PW), 'stat']);
  });

  it('when a user is deleted and created again with the same name and a new password, then it sees its old objects, while the old password and the old token get nothing', async () => {
    writeFileSync(join(work, 'keep.txt'), 'kept across re-creation\n');
    await ok([...v1('bob', BOB_PW), 'upload', 'archive', 'keep.txt']);
    // The gateway now remembers bob's successful check; the token is from before the DELETE.
    const oldToken = /export OS_AUTH_TOKEN=(\S+)/.exec(await ok([...v1('bob', BOB_PW), 'auth']))![1]!;
    const listed = await fetch(`${stack.apiUrl}/api/v1/users/?user=bob`, { headers: { Authorization: ADMIN_AUTH } });
    const [bob] = ((await listed.json()) as { objects: Array<{ id: string }> }).objects;
    expect(await stack.deleteUser(bob!.id)).toBe(204);
    expect((await cli([...v1('bob', BOB_PW), 'stat'])).code).not.toBe(0);
    const newPassword = 'bob-second-life-password-1';
    await stack.createUser('bob', newPassword);
    // At once, on every API: the old password is refused.
    for (const creds of [v1('bob', BOB_PW), v2('bob', BOB_PW), v3('bob', BOB_PW)]) {
      const res = await cli([...creds, 'stat']);
      expect(res.code).not.toBe(0);
      expect(`${res.stdout}${res.stderr}`).toMatch(/401|Unauthorized/);
    }
    // The old token cannot write into the account (keystonemiddleware caches a validation for 1 s here).
    writeFileSync(join(work, 'intruder.txt'), 'must not land\n');
    const oldStorage = ['--os-storage-url', `${swift.proxyUrl}/v1/AUTH_bob`, '--os-auth-token', oldToken];
    await new Promise((r) => setTimeout(r, 1_100));
    const upload = await cli([...oldStorage, 'upload', 'archive', 'intruder.txt']);
    expect(upload.code).not.toBe(0);
    const listing = (await ok([...v1('bob', newPassword), 'list', 'archive'])).split('\n');
    expect(listing).toContain('keep.txt');
    expect(listing).not.toContain('intruder.txt');
  });
});
