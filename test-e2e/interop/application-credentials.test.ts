/**
 * Application credentials as real OpenStack software uses them: `openstack application credential
 * create|list|show|delete` (python-openstackclient) against the gateway, the `swift` CLI
 * (python-swiftclient with keystoneauth1's v3applicationcredential plugin) logging in with one,
 * a real Swift proxy whose keystonemiddleware (with `service_type = object-store`) enforces a
 * credential's access rules, and `openstack ec2 credentials create` in an application credential's
 * session, whose key awscli uses through the proxy's s3api + s3token until the credential is deleted.
 * Access rules are also checked behind a second proxy set up as Swift's sample config and
 * puppet-swift set it, `include_service_catalog = False`.
 *
 * @slow: openstack CLI runs and two proxies (jest.sequencer.js starts it first)
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { freePort } from '../support/processes';
import { startStack, type Stack } from '../support/stack';
import { aws, ClientHome, run, type Run } from './s3-clients';
import { startSwiftCluster, swiftCli, type SwiftCluster } from './swift-cluster';

const OPENSTACK = '/usr/bin/openstack';
const ALICE_PW = 'alice-appcred-password-0001';
const SERVICE_PW = 'swift-service-password-0001';
const HOSTNAME_FILE = readFileSync('/etc/hostname', 'utf8');
const REGION = 'us-east-1';

interface Created {
  id: string;
  name: string;
  secret: string;
}

describe('application credentials with the openstack and swift CLIs and a Swift proxy', () => {
  let swift: SwiftCluster;
  /** A second proxy (on the same storage servers) whose authtoken asks validations without the catalog. */
  let noCatalog: SwiftCluster;
  let stack: Stack;
  let home: ClientHome;
  let gwAuth: string;

  const openstack = (args: string[]): Promise<Run> =>
    run(OPENSTACK, args, {
      HOME: home.dir,
      OS_AUTH_URL: `${gwAuth}/v3`,
      OS_USERNAME: 'alice',
      OS_PASSWORD: ALICE_PW,
      OS_PROJECT_NAME: 'alice',
      OS_USER_DOMAIN_ID: 'default',
      OS_PROJECT_DOMAIN_ID: 'default',
      OS_IDENTITY_API_VERSION: '3',
      OS_INTERFACE: 'public',
    });
  const json = async <T>(args: string[]): Promise<T> => {
    const r = await openstack([...args, '-f', 'json']);
    if (r.code !== 0) throw new Error(`openstack ${args.join(' ')} failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
    return JSON.parse(r.stdout) as T;
  };
  const asPassword = () => [
    '--auth-version',
    '3',
    '--os-auth-url',
    `${gwAuth}/v3`,
    '--os-username',
    'alice',
    '--os-password',
    ALICE_PW,
    '--os-project-name',
    'alice',
    '--os-user-domain-id',
    'default',
    '--os-project-domain-id',
    'default',
  ];
  const asAppCred = (c: Created) => [
    '--os-auth-type',
    'v3applicationcredential',
    '--os-auth-url',
    `${gwAuth}/v3`,
    '--os-application-credential-id',
    c.id,
    // One argument: a generated secret may start with '-', which argparse would take for an option.
    `--os-application-credential-secret=${c.secret}`,
  ];
  const swiftOk = async (args: string[]) => {
    const res = await swiftCli(args, {}, { cwd: home.dir });
    if (res.code !== 0) throw new Error(`swift ${args.join(' ')} failed (${res.code}):\n${res.stdout}\n${res.stderr}`);
    return res.stdout;
  };
  /** A token for the credential, from the gateway itself. */
  const tokenFor = async (c: Created) => {
    const res = await fetch(`${gwAuth}/v3/auth/tokens`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        auth: {
          identity: { methods: ['application_credential'], application_credential: { id: c.id, secret: c.secret } },
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
    // Both proxies validate through the gateway as the same service user. Access rules name a
    // service type: a proxy must know its own, or no rule matches.
    const keystone = (authtokenExtra: Record<string, string> = {}) => ({
      authUrl: `${gwAuth}/v3`,
      username: 'swift-service',
      password: SERVICE_PW,
      projectName: 'swift-service',
      tokenCacheTime: 1,
      authtokenExtra: { service_type: 'object-store', ...authtokenExtra },
    });
    swift = await startSwiftCluster({
      pipeline: 'keystone',
      keystone: { ...keystone(), s3: { location: REGION, serviceAuth: true, secretCacheDuration: 0 } },
    });
    stack = await startStack({
      database: 'postgres',
      redis: true,
      s3SecretKeys: `interop:${randomBytes(32).toString('base64')}`,
      gateway: { port: gwPort, publicUrl: gwAuth, storageUrl: `${swift.proxyUrl}/v1` },
    });
    await stack.createUser('swift-service', SERVICE_PW, { is_superuser: true });
    await stack.createUser('alice', ALICE_PW);
    await swiftOk([...asPassword(), 'upload', '--object-name', 'hello.txt', 'public', '/etc/hostname']);
    await swiftOk([...asPassword(), 'upload', '--object-name', 'secret.txt', 'private', '/etc/hostname']);
    noCatalog = await swift.addProxy({
      pipeline: 'keystone',
      keystone: keystone({ include_service_catalog: 'False' }),
    });
    // The catalog names the first proxy: the second is reached with --os-storage-url.
    const there = ['--os-storage-url', noCatalog.storageUrl('alice')];
    await swiftOk([...asPassword(), ...there, 'upload', '--object-name', 'hello.txt', 'public', '/etc/hostname']);
    await swiftOk([...asPassword(), ...there, 'upload', '--object-name', 'secret.txt', 'private', '/etc/hostname']);
  });
  afterAll(async () => {
    await stack?.close();
    await noCatalog?.stop();
    await swift?.stop();
    home?.close();
  });

  it('when the openstack client creates, lists, shows and deletes a credential, then the secret is shown once and the credential goes away', async () => {
    const created = await json<Created & { roles: unknown; unrestricted: boolean }>([
      'application',
      'credential',
      'create',
      'cli-key',
      '--description',
      'from the CLI',
    ]);
    expect(created.name).toBe('cli-key');
    expect(created.id).toMatch(/^[0-9a-f]{32}$/);
    expect(created.secret.length).toBeGreaterThanOrEqual(80);
    const listed = await json<Array<Record<string, unknown>>>(['application', 'credential', 'list']);
    expect(listed.map((c) => c.Name)).toContain('cli-key');
    expect(JSON.stringify(listed)).not.toContain(created.secret);
    const shown = await json<Record<string, unknown>>(['application', 'credential', 'show', 'cli-key']);
    expect(shown.id).toBe(created.id);
    expect(shown.secret ?? null).toBeNull();
    const deleted = await openstack(['application', 'credential', 'delete', 'cli-key']);
    expect(deleted.code).toBe(0);
    expect(
      (await json<Array<Record<string, unknown>>>(['application', 'credential', 'list'])).map((c) => c.Name),
    ).not.toContain('cli-key');
  });

  it("when the swift CLI logs in with v3applicationcredential, then it lists, uploads and reads alice's account", async () => {
    const c = await json<Created>(['application', 'credential', 'create', 'swift-key']);
    expect((await swiftOk([...asAppCred(c), 'list'])).split('\n')).toEqual(
      expect.arrayContaining(['private', 'public']),
    );
    await swiftOk([...asAppCred(c), 'upload', '--object-name', 'by-appcred.txt', 'public', '/etc/hostname']);
    expect((await swiftOk([...asAppCred(c), 'list', 'public'])).split('\n')).toContain('by-appcred.txt');
    // Deleted: the next login fails.
    expect((await openstack(['application', 'credential', 'delete', c.id])).code).toBe(0);
    expect((await swiftCli([...asAppCred(c), 'list'], {}, { cwd: home.dir })).code).not.toBe(0);
  });

  it("when `openstack ec2 credentials create` runs in an unrestricted credential's session, then awscli reads through the proxy with that key until the credential is deleted", async () => {
    const c = await json<Created>(['application', 'credential', 'create', 's3-maker', '--unrestricted']);
    const asAppCredential = (args: string[]) =>
      run(OPENSTACK, args, {
        HOME: home.dir,
        OS_AUTH_TYPE: 'v3applicationcredential',
        OS_AUTH_URL: `${gwAuth}/v3`,
        OS_APPLICATION_CREDENTIAL_ID: c.id,
        OS_APPLICATION_CREDENTIAL_SECRET: c.secret,
        OS_IDENTITY_API_VERSION: '3',
        OS_INTERFACE: 'public',
      });
    const made = await asAppCredential(['ec2', 'credentials', 'create', '-f', 'json']);
    if (made.code !== 0)
      throw new Error(`openstack ec2 credentials create failed (${made.code}):\n${made.stdout}\n${made.stderr}`);
    const ec2 = JSON.parse(made.stdout) as { access: string; secret: string; project_id: string };
    expect(ec2.project_id).toBe('alice');
    // Bound to the application credential that made it, as Keystone keeps app_cred_id.
    expect((await stack.db('s3_credentials').where({ access_key: ec2.access }).first()).application_credential_id).toBe(
      c.id,
    );

    const key = { access: ec2.access, secret: ec2.secret };
    const listed = await aws(home, swift.proxyUrl, REGION, key, ['s3', 'ls', 's3://public']);
    if (listed.code !== 0) swift.dumpLogs(60);
    expect({ code: listed.code, stderr: listed.stderr }).toEqual({ code: 0, stderr: '' });
    expect(listed.stdout).toContain('hello.txt');

    expect((await openstack(['application', 'credential', 'delete', c.id])).code).toBe(0);
    // Its EC2 key went with it: the next S3 request is refused (s3token asks the gateway every time).
    const refused = await aws(home, swift.proxyUrl, REGION, key, ['s3', 'ls', 's3://public']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/InvalidAccessKeyId|AccessDenied|SignatureDoesNotMatch|403/);
  });

  it.each([
    ['include_service_catalog = True (the default)', () => swift],
    ["include_service_catalog = False (Swift's sample config)", () => noCatalog],
  ])(
    'when a credential may only GET /v1/AUTH_alice/public/**, then a proxy with %s serves that and refuses everything else',
    async (setting, proxy) => {
      const rules = JSON.stringify([{ service: 'object-store', method: 'GET', path: '/v1/AUTH_alice/public/**' }]);
      const name = `public-reader-${setting.includes('False') ? 'nocatalog' : 'catalog'}`;
      const c = await json<Created>(['application', 'credential', 'create', name, '--access-rules', rules]);
      const token = await tokenFor(c);
      const there = ['--os-storage-url', proxy().storageUrl('alice')];
      const at = (path: string, method = 'GET') =>
        fetch(`${proxy().proxyUrl}${path}`, { method, headers: { 'X-Auth-Token': token } });
      const allowed = await at('/v1/AUTH_alice/public/hello.txt');
      expect(allowed.status).toBe(200);
      expect(await allowed.text()).toBe(HOSTNAME_FILE);
      for (const [path, method] of [
        ['/v1/AUTH_alice/private/secret.txt', 'GET'],
        ['/v1/AUTH_alice', 'GET'],
        ['/v1/AUTH_alice/public/new.txt', 'PUT'],
        ['/v1/AUTH_alice/public/hello.txt', 'DELETE'],
      ] as const) {
        const res = await at(path, method);
        expect([401, 403]).toContain(res.status);
      }
      // The swift CLI with the same credential: the allowed object downloads, the other does not.
      expect(await swiftOk([...asAppCred(c), ...there, 'download', 'public', 'hello.txt', '-o', '-'])).toBe(
        HOSTNAME_FILE,
      );
      const refused = await swiftCli(
        [...asAppCred(c), ...there, 'download', 'private', 'secret.txt', '-o', '-'],
        {},
        { cwd: home.dir },
      );
      expect(refused.code).not.toBe(0);
      // Refused by the rules, not failed: keystonemiddleware answers 500 when it cannot check them.
      expect(`${refused.stdout}${refused.stderr}`).toMatch(/40[13]/);
    },
  );
});
