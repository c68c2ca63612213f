/**
 * A storage user's Sharing page against a real Swift (keystone pipeline with `tempurl`) and Cairn's
 * own gateway and management API: a read ACL granted through the API lets another user list the
 * container with the `swift` CLI; temporary URLs the API signs download with curl until they end,
 * and keep working across one key rotation. The console's Sharing page (Debian's chromium) does the
 * same through its ACL editor and generator, and never sees the key. On My keys, alice makes an S3
 * key that boto3 then uses through s3api, and composes an access-ruled application credential that
 * the `swift` CLI can use only as the rule says; deleting each there ends it. Needs the console built
 * (`node scripts/build.mjs packages/console`; `pnpm test:interop` does).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { launch, PageProblems, type Browser } from '../browser/chromium';
import { axeFindings, storageUserSignedIn } from '../browser/console-page';
import { formatBytes } from '../../packages/console/src/lib/format';
import { cairn, freePort } from '../support/processes';
import { ADMIN_AUTH, ADMIN_AUTH_NAME, ADMIN_KEY, startStack, type Stack } from '../support/stack';
import { boto3, ClientHome, run } from './s3-clients';
import { SWIFT_PYTHON, startSwiftCluster, swiftCli, type SwiftCluster } from './swift-cluster';

const PW = 'sharing-password-0001';
const SERVICE_PW = 'swift-service-password-0001';
const MAX_LIFETIME = 60;
const REGION = 'us-east-1';
const CONTENT = 'shared through a temporary URL\n';
const CONSOLE_DIR = join(__dirname, '..', '..', 'packages', 'console', 'dist');
const ARTIFACTS = join(__dirname, '..', 'browser', 'artifacts');

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

describe('Sharing: container ACLs and temporary URLs through the management API, checked by Swift', () => {
  let swift: SwiftCluster;
  let stack: Stack;
  let home: ClientHome;
  let gwAuth: string;
  let cookie = '';
  let csrf = '';

  const call = async (method: string, path: string, body?: unknown, extra: Record<string, string> = {}) => {
    const res = await fetch(`${stack.apiUrl}${path}`, {
      method,
      headers: {
        Accept: 'application/json',
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...extra,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return {
      status: res.status,
      body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
      headers: res.headers,
    };
  };
  const self = (method: string, path: string, body?: unknown): Promise<Answer> =>
    call(method, `/api/v1/self/${path}`, body, { Cookie: cookie, 'X-Cairn-CSRF': csrf });
  const as = (user: string) => [
    '--auth-version',
    '3',
    '--os-auth-url',
    `${gwAuth}/v3`,
    '--os-username',
    user,
    '--os-password',
    PW,
    '--os-project-name',
    user,
    '--os-user-domain-id',
    'default',
    '--os-project-domain-id',
    'default',
  ];
  /** A GET with curl, as a script given a link makes it: [status, body when 200]. */
  const curl = async (url: string): Promise<[number, string]> => {
    const r = await run('/usr/bin/curl', ['--silent', '--show-error', '--write-out', '\n%{http_code}', url], {});
    const end = r.stdout.lastIndexOf('\n');
    const status = Number(r.stdout.slice(end + 1));
    return [status, status === 200 ? r.stdout.slice(0, end) : ''];
  };
  /** A token from the gateway, as the swift CLI's v3 login gets it (cheaper than starting the CLI). */
  const tokenOf = async (user: string): Promise<string> => {
    const res = await fetch(`${gwAuth}/v3/auth/tokens`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        auth: {
          identity: {
            methods: ['password'],
            password: { user: { name: user, domain: { id: 'default' }, password: PW } },
          },
          scope: { project: { name: user, domain: { id: 'default' } } },
        },
      }),
    });
    expect(res.status).toBe(201);
    return res.headers.get('x-subject-token')!;
  };

  beforeAll(async () => {
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
        // keystonemiddleware enforces an application credential's access rules for this service.
        authtokenExtra: { service_type: 'object-store' },
        // My keys' S3 keys, checked by s3token against the gateway (every request asks it).
        s3: { location: REGION, secretCacheDuration: 0 },
      },
      // tempurl before the auth filters, as Swift's sample pipeline has it: it authorizes the
      // request itself, and keystoneauth then lets a tempurl request through.
      proxyPipeline: [
        'catch_errors',
        'gatekeeper',
        'healthcheck',
        'proxy-logging',
        'cache',
        'tempurl',
        'authtoken',
        's3api',
        's3token',
        'keystoneauth',
        'proxy-logging',
        'proxy-server',
      ],
      extraProxyConfig: '[filter:tempurl]\nuse = egg:swift#tempurl\n',
    });
    stack = await startStack({
      database: 'postgres',
      redis: true,
      tempUrlMaxSeconds: MAX_LIFETIME,
      consoleDir: CONSOLE_DIR,
      s3SecretKeys: `interop:${randomBytes(32).toString('base64')}`,
      gateway: { port: gwPort, publicUrl: gwAuth, storageUrl: `${swift.proxyUrl}/v1` },
    });
    const patched = await call(
      'PATCH',
      '/api/v1/clusters/1/',
      { auth_url: gwAuth, storage_url: `${swift.proxyUrl}/v1` },
      { Authorization: ADMIN_AUTH },
    );
    expect(patched.status).toBe(202);
    await stack.createUser('swift-service', SERVICE_PW, { is_superuser: true });
    await stack.createUser('alice', PW);
    await stack.createUser('bob', PW);
    await stack.createUser('carol', PW);
    const alice = await tokenOf('alice');
    for (const [path, body] of [
      ['/shared', undefined],
      ['/shared/hello.txt', CONTENT],
    ] as const) {
      const put = await fetch(`${swift.storageUrl('alice')}${path}`, {
        method: 'PUT',
        headers: { 'X-Auth-Token': alice },
        body,
      });
      expect(put.status).toBe(201);
    }
    const signIn = await call('POST', '/api/v1/self/session/', { cluster: 'default', user: 'alice', password: PW });
    expect(signIn.status).toBe(201);
    cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
    csrf = String(signIn.body.csrf_token);
  });
  afterAll(async () => {
    await pageBrowser?.close();
    await stack?.close();
    await swift?.stop();
    home?.close();
  });

  it('when alice grants bob read through the API, then bob lists her container with the swift CLI; a user not in the cluster is refused first', async () => {
    const bob = await tokenOf('bob');
    const bobAsks = async (method: string, path: string) =>
      (await fetch(`${swift.storageUrl('alice')}${path}`, { method, headers: { 'X-Auth-Token': bob } })).status;
    const bobLists = () =>
      swiftCli([...as('bob'), '--os-storage-url', swift.storageUrl('alice'), 'list', 'shared'], {}, { cwd: home.dir });
    expect(await bobAsks('GET', '/shared')).toBe(403);

    const listed = await self('GET', 'containers/');
    expect(listed.status).toBe(200);
    expect(listed.body.objects).toEqual([
      expect.objectContaining({ name: 'shared', object_count: 1, public_read: false, read: { users: [], other: [] } }),
    ]);

    const refused = await self('PUT', 'containers/shared/', { read_users: ['bob', 'nobody'] });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe(
      "No user 'nobody' in cluster 'default': an ACL names other users of your cluster, by their user names.",
    );
    expect(((await self('GET', 'containers/shared/')).body.read as { users: string[] }).users).toEqual([]);

    const set = await self('PUT', 'containers/shared/', { read_users: ['bob'] });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ read: { users: ['bob'], other: [] }, write: { users: [], other: [] } });
    const res = await bobLists();
    expect([res.code, res.stdout.trim()]).toEqual([0, 'hello.txt']);
    // Bob may read, not write.
    expect(
      (
        await swiftCli(
          [...as('bob'), '--os-storage-url', swift.storageUrl('alice'), 'delete', 'shared', 'hello.txt'],
          {},
          { cwd: home.dir },
        )
      ).code,
    ).not.toBe(0);

    expect((await self('PUT', 'containers/shared/', {})).status).toBe(200);
    expect((await bobLists()).code).not.toBe(0);
    expect((await self('GET', 'containers/nothere/')).status).toBe(404);
  });

  it('when alice makes temporary URLs, then curl downloads them until they end, across one rotation but not two', async () => {
    const keys = await self('GET', 'temp_url_keys/');
    expect(keys.body).toMatchObject({
      tempurl: true,
      key_set: false,
      previous_key_set: false,
      max_lifetime_seconds: MAX_LIFETIME,
    });
    expect(JSON.stringify(keys.body)).not.toMatch(/[A-Za-z0-9_-]{43}/);
    const make = (lifetime: number) =>
      self('POST', 'temp_urls/', {
        container: 'shared',
        object: 'hello.txt',
        method: 'GET',
        lifetime_seconds: lifetime,
      });
    const noKey = await make(5);
    expect([noKey.status, noKey.body.error]).toEqual([
      409,
      'Your account has no temporary URL key yet: set one first.',
    ]);

    expect((await self('POST', 'temp_url_keys/', { action: 'set' })).body).toMatchObject({ key_set: true });
    const tooLong = await make(MAX_LIFETIME + 1);
    expect([tooLong.status, tooLong.body.error]).toEqual([
      400,
      `The lifetime_seconds field is at most ${MAX_LIFETIME} (the longest a temporary URL may work here).`,
    ]);

    const first = await make(MAX_LIFETIME);
    expect(first.status).toBe(201);
    const firstUrl = String(first.body.url);
    expect(firstUrl.startsWith(`${swift.storageUrl('alice')}/shared/hello.txt?temp_url_sig=`)).toBe(true);
    const get = curl;
    expect(await get(firstUrl)).toEqual([200, CONTENT]);

    // Rotate: the first key moves to Key-2, its link keeps working; new links use the new key.
    expect((await self('POST', 'temp_url_keys/', { action: 'rotate' })).body).toMatchObject({
      key_set: true,
      previous_key_set: true,
    });
    expect(await get(firstUrl)).toEqual([200, CONTENT]);
    // 4 s: enough for the two checks and the rotation between them on a busy machine.
    const short = await make(4);
    expect(await get(String(short.body.url))).toEqual([200, CONTENT]);
    // A second rotation (or dropping the previous key) ends the first key's links.
    expect((await self('POST', 'temp_url_keys/', { action: 'rotate' })).status).toBe(200);
    expect((await get(firstUrl))[0]).toBe(401);
    expect(await get(String(short.body.url))).toEqual([200, CONTENT]);

    // Past its lifetime (Swift compares whole seconds), the short link is refused.
    const until = Date.parse(String(short.body.expires_at)) + 1_100;
    await new Promise((r) => setTimeout(r, Math.max(0, until - Date.now())));
    expect((await get(String(short.body.url)))[0]).toBe(401);
  });

  /**
   * A storage user's console in chromium, signed in with the password, on the page `link` names:
   * one browser for the tests that click, closed in afterAll.
   */
  let pageBrowser: Browser | undefined;
  const consolePage = async (user: string, link: string): Promise<{ page: Page; problems: PageProblems }> => {
    pageBrowser ??= await launch();
    const signedIn = await storageUserSignedIn(pageBrowser, stack.apiUrl, user, PW);
    await signedIn.page.getByRole('link', { name: link }).click();
    await signedIn.page.getByRole('heading', { level: 1, name: link }).waitFor();
    return signedIn;
  };
  /** Deletes a listed key by its row's button, through the confirmation. */
  const deleteByClicking = async (page: Page, button: string): Promise<void> => {
    await page.getByRole('button', { name: button }).click();
    await page.getByRole('button', { name: 'Delete credential' }).click();
    await page.getByRole('button', { name: button }).waitFor({ state: 'detached' });
  };

  it('when alice makes an S3 key on My keys, then boto3 lists and writes her container with it until she deletes it there', async () => {
    const { page, problems } = await consolePage('alice', 'My keys');
    await page.getByRole('button', { name: 'New S3 credential' }).click();
    const access = (await page
      .locator('p', { hasText: /^Access key / })
      .locator('code')
      .textContent())!.trim();
    const key = { access, secret: (await page.locator('.shown-once code').textContent())!.trim() };
    expect(key.access).toMatch(/^[A-Z0-9]{20}$/);
    const { run, result } = await boto3(
      home,
      swift.proxyUrl,
      REGION,
      key,
      [
        's3.put_object(Bucket="shared", Key="by-s3.txt", Body=b"s3")',
        'listed = sorted(o["Key"] for o in s3.list_objects_v2(Bucket="shared")["Contents"])',
        's3.delete_object(Bucket="shared", Key="by-s3.txt")',
        'print(json.dumps(listed))',
      ].join('\n'),
    );
    expect([result, run.stderr]).toEqual([['by-s3.txt', 'hello.txt'], '']);
    await page.getByRole('button', { name: 'Done' }).click();
    await deleteByClicking(page, `Delete S3 credential ${key.access}`);
    expect(problems.take()).toEqual([]);
    await page.close();
    const after = await boto3(
      home,
      swift.proxyUrl,
      REGION,
      key,
      'print(json.dumps(error_code(lambda: s3.list_objects_v2(Bucket="shared"))))',
    );
    // s3token answers for a key the gateway no longer knows as Swift does for a wrong secret.
    expect(after.result).toBe('SignatureDoesNotMatch');
  });

  it('when alice composes an access-ruled application credential on My keys, then the swift CLI does exactly what it allows, the console refuses it a session, and deleting it there ends it', async () => {
    const { page, problems } = await consolePage('alice', 'My keys');
    await page.getByLabel('Name').fill('read-shared');
    await page.getByRole('button', { name: 'Add an access rule' }).click();
    await page.getByRole('group', { name: 'Access rule 1' }).getByLabel('Container', { exact: true }).fill('shared');
    expect(JSON.parse((await page.getByLabel('What will be sent').textContent())!)).toMatchObject({
      name: 'read-shared',
      access_rules: [{ service: 'object-store', method: 'GET', path: '/v1/AUTH_alice/shared/**' }],
    });
    await page.getByRole('button', { name: 'New application credential' }).click();
    const secret = (await page
      .locator('.shown-once', { hasText: 'Secret of read-shared' })
      .locator('code')
      .textContent())!;
    const id = (await page
      .locator('p', { hasText: /^Application credential / })
      .locator('code')
      .textContent())!;
    await page.getByRole('button', { name: 'Done' }).click();
    const asCredential = [
      '--os-auth-type',
      'v3applicationcredential',
      '--os-auth-url',
      `${gwAuth}/v3`,
      '--os-application-credential-id',
      id.trim(),
      // One argument: a generated secret may start with '-', which argparse would take for an option.
      `--os-application-credential-secret=${secret.trim()}`,
    ];
    const cli = (args: string[]) => swiftCli([...asCredential, ...args], {}, { cwd: home.dir });
    const read = await cli(['download', 'shared', 'hello.txt', '-o', '-']);
    expect([read.code, read.stdout]).toEqual([0, CONTENT]);
    // Outside the rule: the account's listing, a write, and the container's own listing.
    for (const args of [['list'], ['upload', '--object-name', 'x.txt', 'shared', '/etc/hostname'], ['list', 'shared']])
      expect((await cli(args)).code).not.toBe(0);

    // Too narrow for a console session (Swift answers requests outside the rules 401, as for a dead token).
    const signIn = await call('POST', '/api/v1/self/session/', {
      cluster: 'default',
      application_credential_id: id.trim(),
      application_credential_secret: secret.trim(),
    });
    expect([signIn.status, signIn.body.error]).toEqual([
      403,
      expect.stringMatching(/^This application credential has access rules/),
    ]);
    await deleteByClicking(page, 'Delete application credential read-shared');
    expect(problems.take()).toEqual([]);
    await page.close();
    expect((await cli(['download', 'shared', 'hello.txt', '-o', '-'])).code).not.toBe(0);
  });

  it('when carol uses the Sharing page, then bob may read her container and the link it makes downloads; no key reaches the page', async () => {
    const carol = await tokenOf('carol');
    for (const [path, body] of [
      ['/photos', undefined],
      ['/photos/cat.txt', CONTENT],
    ] as const) {
      const put = await fetch(`${swift.storageUrl('carol')}${path}`, {
        method: 'PUT',
        headers: { 'X-Auth-Token': carol },
        body,
      });
      expect(put.status).toBe(201);
    }
    mkdirSync(ARTIFACTS, { recursive: true });
    const browser = await launch();
    try {
      const page = await browser.context.newPage();
      page.setDefaultTimeout(30000);
      const problems = new PageProblems(page);
      const answers: string[] = [];
      page.on('response', (r) => {
        if (r.url().includes('/api/v1/self/'))
          void r.text().then(
            (t) => answers.push(t),
            () => undefined,
          );
      });
      await page.goto(`${stack.apiUrl}/console/`);
      await page.getByRole('radio', { name: 'Storage user' }).check();
      await page.getByLabel('Cluster').fill('default');
      // The application-credential form asks the gateway too: a wrong one gets the API's sentence.
      await page.getByRole('button', { name: 'Use an application credential instead' }).click();
      await page.getByLabel('Credential ID').fill('no-such-credential');
      await page.getByLabel('Credential secret').fill('not-a-secret');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText('The cluster or the application credential').waitFor();
      expect(problems.take()).toEqual([
        expect.stringMatching(/^HTTP 401: POST .*\/self\/session\/$/),
        expect.stringMatching(/^console: .*401/),
      ]);
      await page.getByRole('button', { name: 'Use your user name and password instead' }).click();
      await page.getByLabel('User name').fill('carol');
      await page.getByLabel('Password').fill(PW);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { level: 1, name: 'My storage' }).waitFor();
      await page.getByRole('link', { name: 'Sharing' }).click();
      await page.getByRole('heading', { level: 1, name: 'Sharing' }).waitFor();
      await page.getByRole('button', { name: 'Edit who may use photos' }).click();
      await page.getByLabel('Users who may read').fill('bob, nobody');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText("No user 'nobody' in cluster 'default'").waitFor();
      // The refusal is the one problem so far (chromium logs the 400 too).
      expect(problems.take()).toEqual([
        expect.stringMatching(/^HTTP 400: PUT .*\/self\/containers\/photos\/$/),
        expect.stringMatching(/^console: .*400/),
      ]);
      await page.getByLabel('Users who may read').fill('bob');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.locator('table.containers tbody tr', { hasText: 'photos' }).getByText('bob').waitFor();
      const bobLists = await swiftCli(
        [...as('bob'), '--os-storage-url', swift.storageUrl('carol'), 'list', 'photos'],
        {},
        { cwd: home.dir },
      );
      expect([bobLists.code, bobLists.stdout.trim()]).toEqual([0, 'cat.txt']);

      await page.getByRole('button', { name: 'Set a key' }).click();
      await page.getByRole('button', { name: 'Rotate the key' }).waitFor();
      await page.getByRole('textbox', { name: 'Container', exact: true }).fill('photos');
      await page.getByRole('textbox', { name: 'Object', exact: true }).fill('cat.txt');
      await page.getByLabel('Lifetime (minutes)').fill('1');
      await page.getByRole('button', { name: 'Make URL' }).click();
      const url = await page.locator('.copyable code').textContent();
      expect(url).toMatch(/\/v1\/AUTH_carol\/photos\/cat\.txt\?temp_url_sig=[0-9a-f]{64}&temp_url_expires=\d+$/);
      // The link as a script or another machine uses it: curl, no cookie, no token.
      expect(await curl(url!)).toEqual([200, CONTENT]);
      expect(await axeFindings(page)).toEqual([]);
      await page.screenshot({ path: join(ARTIFACTS, 'self-service-sharing-1280x800.png'), fullPage: true });
      expect(problems.take()).toEqual([]);
      // The key itself never reached the page: Swift's account metadata holds it, the API only uses it.
      const head = await fetch(swift.storageUrl('carol'), { method: 'HEAD', headers: { 'X-Auth-Token': carol } });
      const key = head.headers.get('x-account-meta-temp-url-key');
      expect(key).toBeTruthy();
      expect(answers.join('\n')).not.toContain(key!);
    } finally {
      await browser.close();
    }
  });

  it('when an account has more containers than a page holds, then Sharing pages through them with Next and Previous as Swift lists them', async () => {
    await stack.createUser('dave', PW);
    const dave = await tokenOf('dave');
    // One more than a page (CONTAINERS_LISTED): zero-padded so Swift's order is the numeric one.
    const names = Array.from({ length: 201 }, (_, i) => `c${String(i).padStart(3, '0')}`);
    // The first PUT alone: it autocreates the account. Concurrent first PUTs race Swift's
    // autocreate (each sees no account, one creates it, another can still answer 404).
    const first = await fetch(`${swift.storageUrl('dave')}/${names[0]}`, {
      method: 'PUT',
      headers: { 'X-Auth-Token': dave },
    });
    expect(first.status).toBe(201);
    const queue = names.slice(1);
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
          const put = await fetch(`${swift.storageUrl('dave')}/${name}`, {
            method: 'PUT',
            headers: { 'X-Auth-Token': dave },
          });
          expect(put.status).toBe(201);
        }
      }),
    );
    const { page, problems } = await consolePage('dave', 'Sharing');
    const rows = page.locator('table.containers tbody tr');
    const firstCells = () => rows.locator('td:first-child, th:first-child').allTextContents();
    await page.getByText('Containers 1 to 200 (there are more)').waitFor();
    expect((await firstCells()).map((t) => t.trim())).toEqual(names.slice(0, 200));
    expect(await page.getByRole('button', { name: 'Previous 200' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Next 200' }).click();
    await page.getByText('Containers 201 to 201').waitFor();
    expect((await firstCells()).map((t) => t.trim())).toEqual(['c200']);
    expect(await page.getByRole('button', { name: 'Next 200' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Previous 200' }).click();
    await page.getByText('Containers 1 to 200 (there are more)').waitFor();
    expect(await rows.count()).toBe(200);
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it("when alice's account is collected, then My storage shows what Swift's account HEAD reports, to her session, her own token and her page", async () => {
    // The policies as `cairn capacity collect` would report them; the collector reads them.
    const put = await call(
      'PUT',
      '/api/v1/clusters/1/devices/',
      {
        policies: [
          { index: 0, name: 'gold', default: true },
          { index: 1, name: 'silver' },
        ],
        devices: [],
      },
      { Authorization: ADMIN_AUTH },
    );
    expect(put.status).toBe(204);
    // Containers' figures reach the account server through the updater, as in a real cluster.
    const updater = await run(
      SWIFT_PYTHON,
      [join(__dirname, 'swift-container-updater.py'), swift.swiftDir, swift.devicesDir],
      { HOME: home.dir },
    );
    if (updater.code !== 0) throw new Error(`container updater failed:\n${updater.stdout}${updater.stderr}`);
    const collected = await cairn(['utilization', 'collect', '--cluster', 'default'], {
      CAIRN_API_URL: stack.apiUrl,
      CAIRN_API_KEY: `${ADMIN_AUTH_NAME}:${ADMIN_KEY}`,
      CAIRN_UTILIZATION_USER: 'swift-service',
      CAIRN_UTILIZATION_PASSWORD: SERVICE_PW,
    });
    expect([collected.code, collected.out]).toEqual([0, expect.stringMatching(/0 failed/)]);

    const token = await tokenOf('alice');
    const head = await fetch(swift.storageUrl('alice'), { method: 'HEAD', headers: { 'X-Auth-Token': token } });
    const swiftSays = {
      bytes_used: Number(head.headers.get('x-account-bytes-used')),
      object_count: Number(head.headers.get('x-account-object-count')),
    };
    // Her container holds hello.txt at least: a comparison of zeros would prove nothing.
    expect(swiftSays.object_count).toBeGreaterThan(0);
    const bySession = await self('GET', 'storage/');
    const byToken = await call('GET', '/api/v1/self/storage/', undefined, { 'X-Auth-Token': token });
    for (const answer of [bySession, byToken]) {
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ user: 'alice', ...swiftSays, usage_sampled_at: expect.any(String) });
    }

    // And on her My storage page in chromium: the same figures, as the console formats them.
    const { page, problems } = await consolePage('alice', 'My storage');
    const used = (label: string) =>
      page
        .locator('table.standing tr', { has: page.locator('th', { hasText: new RegExp(`^${label}$`) }) })
        .locator('td')
        .first()
        .textContent();
    expect([await used('Bytes'), await used('Objects')]).toEqual([
      formatBytes(swiftSays.bytes_used),
      swiftSays.object_count.toLocaleString('en-US'),
    ]);
    expect(problems.take()).toEqual([]);
    await page.close();
  });
});
