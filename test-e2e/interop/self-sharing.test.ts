/**
 * A storage user's Sharing page against a real Swift (keystone pipeline with `tempurl`) and Cairn's
 * own gateway and management API: a read ACL granted through the API lets another user list the
 * container with the `swift` CLI; temporary URLs the API signs download with fetch until they end,
 * and keep working across one key rotation.
 */
import { freePort } from '../support/processes';
import { ADMIN_AUTH, CHEAP_HASH_PARAMS, startStack, type Stack } from '../support/stack';
import { ClientHome } from './s3-clients';
import { startSwiftCluster, swiftCli, type SwiftCluster } from './swift-cluster';

const PW = 'sharing-password-0001';
const SERVICE_PW = 'swift-service-password-0001';
const MAX_LIFETIME = 60;
const CONTENT = 'shared through a temporary URL\n';

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
        'keystoneauth',
        'proxy-logging',
        'proxy-server',
      ],
      extraProxyConfig: '[filter:tempurl]\nuse = egg:swift#tempurl\n',
    });
    stack = await startStack({
      database: 'postgres',
      redis: true,
      hashParams: CHEAP_HASH_PARAMS,
      tempUrlMaxSeconds: MAX_LIFETIME,
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

  it('when alice makes temporary URLs, then fetch downloads them until they end, across one rotation but not two', async () => {
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
    const get = async (url: string) => {
      const r = await fetch(url);
      return [r.status, r.status === 200 ? await r.text() : ''];
    };
    expect(await get(firstUrl)).toEqual([200, CONTENT]);

    // Rotate: the first key moves to Key-2, its link keeps working; new links use the new key.
    expect((await self('POST', 'temp_url_keys/', { action: 'rotate' })).body).toMatchObject({
      key_set: true,
      previous_key_set: true,
    });
    expect(await get(firstUrl)).toEqual([200, CONTENT]);
    const short = await make(2);
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
});
