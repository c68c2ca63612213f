/**
 * S3 through a stock Swift proxy: Swift's s3api turns S3 requests into Swift ones, its s3token
 * posts each request's string to sign and signature to the Cairn gateway's /v3/s3tokens, and
 * keystoneauth authorizes the identity the gateway answers. The credentials come from the
 * management API; the clients are Debian's awscli (SigV4), boto3 (SigV4, presigned URLs) and s3cmd
 * (SigV2). Management API, gateway, Postgres and Redis are real too.
 *
 * @slow: three S3 clients through a proxy (jest.sequencer.js starts it first)
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { freePort } from '../support/processes';
import { ADMIN_AUTH, startStack, type Stack, type StackOptions } from '../support/stack';
import { aws, boto3, ClientHome, s3cmd, type Run, type S3Key } from './s3-clients';
import { startSwiftCluster, type S3Options, type SwiftCluster } from './swift-cluster';

const SERVICE_PW = 'swift-service-password-01';
const ALICE_PW = 'alice-s3-interop-password';
const REGION = 'us-east-1';
const S3_KEYS = `interop:${randomBytes(32).toString('base64')}`;

/**
 * The storage servers every world's proxy stands in front of: started with the first world (whose
 * proxy is the cluster's own), stopped after the last test of the file. Each world has its own
 * proxy (and memcached) and its own Cairn stack, so what one world's proxy is configured with,
 * caches or is told never reaches another; users of different worlds have different names.
 */
let storage: SwiftCluster | undefined;
afterAll(async () => {
  await storage?.stop();
});

/** A Swift proxy with s3api + s3token in front of keystoneauth, and a Cairn stack whose gateway it asks. */
async function startS3World(
  s3: S3Options,
  gateway: StackOptions['gateway'] = {},
): Promise<{ swift: SwiftCluster; stack: Stack; endpoint: string; hostPort: string; close: () => Promise<void> }> {
  const gwPort = await freePort();
  const gwAuth = `http://127.0.0.1:${gwPort}/auth`;
  const proxy = {
    pipeline: 'keystone' as const,
    keystone: {
      authUrl: `${gwAuth}/v3`,
      username: 'swift-service',
      password: SERVICE_PW,
      projectName: 'swift-service',
      tokenCacheTime: 1,
      s3: { location: REGION, ...s3 },
    },
  };
  const swift = storage ? await storage.addProxy(proxy) : (storage = await startSwiftCluster(proxy));
  const stack = await startStack({
    database: 'postgres',
    redis: true,
    s3SecretKeys: S3_KEYS,
    gateway: { port: gwPort, publicUrl: gwAuth, storageUrl: `${swift.proxyUrl}/v1`, ...gateway },
  });
  await stack.createUser('swift-service', SERVICE_PW, { is_superuser: true });
  const close = async () => {
    await stack.close();
    if (swift !== storage) await swift.stop();
  };
  return { swift, stack, endpoint: swift.proxyUrl, hostPort: new URL(swift.proxyUrl).host, close };
}

/** A new S3 credential for the user, through the management API (the secret is in this answer only). */
async function credentialFor(stack: Stack, user: { id: string }): Promise<S3Key & { uri: string }> {
  const res = await fetch(`${stack.apiUrl}/api/v1/s3_credentials/`, {
    method: 'POST',
    headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
    body: JSON.stringify({ user: `/api/v1/users/${user.id}/` }),
  });
  if (res.status !== 201) throw new Error(`create credential: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { access_key: string; secret: string; resource_uri: string };
  return { access: body.access_key, secret: body.secret, uri: body.resource_uri };
}

const ok = (r: Run, what: string, swift: SwiftCluster): Run => {
  if (r.code !== 0) {
    swift.dumpLogs(60);
    throw new Error(`${what} failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
  }
  return r;
};

describe('S3 clients through a Swift proxy (s3api + s3token with a service token) against the Cairn gateway', () => {
  let world: Awaited<ReturnType<typeof startS3World>>;
  let home: ClientHome;
  let alice: { id: string };
  let aliceKey: S3Key & { uri: string };

  beforeAll(async () => {
    home = new ClientHome();
    // The gateway requires the service token (its default): every success below proves that
    // this Swift's s3token sent one.
    world = await startS3World({ serviceAuth: true, secretCacheDuration: 0 });
    alice = await world.stack.createUser('alice', ALICE_PW);
    aliceKey = await credentialFor(world.stack, alice);
  });
  afterAll(async () => {
    await world?.close();
    home?.close();
  });

  const awsAs = (key: S3Key, args: string[]) => aws(home, world.endpoint, REGION, key, args);

  it('when awscli (SigV4) makes a bucket, puts, lists, gets and deletes objects, then each step works and the bytes come back', async () => {
    const body = randomBytes(100_000);
    const file = `${home.dir}/upload.bin`;
    writeFileSync(file, body);
    ok(await awsAs(aliceKey, ['s3', 'mb', 's3://alice-aws']), 'aws s3 mb', world.swift);
    ok(await awsAs(aliceKey, ['s3', 'cp', file, 's3://alice-aws/dir/upload.bin']), 'aws s3 cp up', world.swift);
    expect(ok(await awsAs(aliceKey, ['s3', 'ls', 's3://alice-aws/dir/']), 'aws s3 ls', world.swift).stdout).toMatch(
      /100000 upload\.bin/,
    );
    ok(
      await awsAs(aliceKey, ['s3', 'cp', 's3://alice-aws/dir/upload.bin', `${home.dir}/download.bin`]),
      'aws s3 cp down',
      world.swift,
    );
    expect(readFileSync(`${home.dir}/download.bin`).equals(body)).toBe(true);
    ok(await awsAs(aliceKey, ['s3', 'rm', 's3://alice-aws/dir/upload.bin']), 'aws s3 rm', world.swift);
    ok(await awsAs(aliceKey, ['s3', 'rb', 's3://alice-aws']), 'aws s3 rb', world.swift);
    expect(
      ok(
        await awsAs(aliceKey, ['s3api', 'list-buckets', '--query', 'Buckets[].Name', '--output', 'text']),
        'aws list-buckets',
        world.swift,
      ).stdout,
    ).not.toContain('alice-aws');
  });

  it('when boto3 (SigV4) makes a bucket, puts, lists, gets and deletes an object, then each step works and the bytes come back', async () => {
    const { run, result } = await boto3(
      home,
      world.endpoint,
      REGION,
      aliceKey,
      [
        's3.create_bucket(Bucket="alice-boto")',
        's3.put_object(Bucket="alice-boto", Key="a/b c.txt", Body=args["body"].encode())',
        'listed = [o["Key"] for o in s3.list_objects_v2(Bucket="alice-boto")["Contents"]]',
        'got = s3.get_object(Bucket="alice-boto", Key="a/b c.txt")["Body"].read().decode()',
        's3.delete_object(Bucket="alice-boto", Key="a/b c.txt")',
        'after = s3.list_objects_v2(Bucket="alice-boto").get("KeyCount")',
        's3.delete_bucket(Bucket="alice-boto")',
        'print(json.dumps({"listed": listed, "got": got, "after": after}))',
      ].join('\n'),
      { body: 'hello from boto3 ✓' },
    );
    expect(result).toEqual({ listed: ['a/b c.txt'], got: 'hello from boto3 ✓', after: 0 });
    expect(run.code).toBe(0);
  });

  it('when s3cmd (SigV2) makes a bucket, puts, lists, gets and deletes an object, then each step works and the bytes come back', async () => {
    const body = randomBytes(20_000);
    writeFileSync(`${home.dir}/s3cmd-up.bin`, body);
    const cmd = async (args: string[]) =>
      ok(await s3cmd(home, world.hostPort, aliceKey, args), `s3cmd ${args.join(' ')}`, world.swift);
    await cmd(['mb', 's3://alice-s3cmd']);
    await cmd(['put', `${home.dir}/s3cmd-up.bin`, 's3://alice-s3cmd/v2.bin']);
    expect((await cmd(['ls', 's3://alice-s3cmd'])).stdout).toMatch(/20000\s+s3:\/\/alice-s3cmd\/v2\.bin/);
    await cmd(['get', '--force', 's3://alice-s3cmd/v2.bin', `${home.dir}/s3cmd-down.bin`]);
    expect(readFileSync(`${home.dir}/s3cmd-down.bin`).equals(body)).toBe(true);
    await cmd(['del', 's3://alice-s3cmd/v2.bin']);
    await cmd(['rb', 's3://alice-s3cmd']);
  });

  it('when objects are written through S3, then the Swift API shows them in AUTH_alice', async () => {
    await boto3(
      home,
      world.endpoint,
      REGION,
      aliceKey,
      's3.create_bucket(Bucket="alice-both")\ns3.put_object(Bucket="alice-both", Key="from-s3", Body=b"x")\nprint(1)',
    );
    const login = await fetch(`${world.stack.gatewayUrl}/auth/v1.0`, {
      headers: { 'X-Auth-User': 'alice', 'X-Auth-Key': ALICE_PW },
    });
    expect(login.status).toBe(200);
    const listing = await fetch(`${world.swift.storageUrl('alice')}/alice-both?format=json`, {
      headers: { 'X-Auth-Token': login.headers.get('x-auth-token')! },
    });
    expect(listing.status).toBe(200);
    expect(((await listing.json()) as Array<{ name: string }>).map((o) => o.name)).toEqual(['from-s3']);
  });

  it('when a boto3 presigned GET URL is used, then plain HTTP gets the object until it expires, and 403 after', async () => {
    const { result } = await boto3(
      home,
      world.endpoint,
      REGION,
      aliceKey,
      [
        's3.create_bucket(Bucket="alice-presigned")',
        's3.put_object(Bucket="alice-presigned", Key="shared.txt", Body=b"shared bytes")',
        'print(json.dumps(s3.generate_presigned_url("get_object", Params={"Bucket": "alice-presigned", "Key": "shared.txt"}, ExpiresIn=3)))',
      ].join('\n'),
    );
    const url = result as string;
    const issued = Date.now();
    const first = await fetch(url);
    expect(first.status).toBe(200);
    expect(await first.text()).toBe('shared bytes');
    await new Promise((r) => setTimeout(r, Math.max(0, issued + 4500 - Date.now())));
    const late = await fetch(url);
    expect(late.status).toBe(403);
    expect(await late.text()).toMatch(/<Code>AccessDenied<\/Code>/);
  });

  const errorOf = async (key: S3Key) =>
    (
      await boto3(
        home,
        world.endpoint,
        REGION,
        key,
        'print(json.dumps(error_code(lambda: s3.put_object(Bucket="alice-guarded", Key="intruder", Body=b"x"))))',
      )
    ).result;
  const guardedKeys = async () =>
    (
      await boto3(
        home,
        world.endpoint,
        REGION,
        aliceKey,
        'print(json.dumps([o["Key"] for o in s3.list_objects_v2(Bucket="alice-guarded").get("Contents", [])]))',
      )
    ).result;

  // Swift's s3token answers every refusal of the identity service with 401, and s3api reports a
  // 401 as SignatureDoesNotMatch: a wrong secret, an unknown or deleted access key and a disabled
  // user look alike to the client, as they do with Keystone, and nothing is written.
  it('when the secret is wrong or the access key unknown, then SignatureDoesNotMatch and nothing is written', async () => {
    await boto3(home, world.endpoint, REGION, aliceKey, 's3.create_bucket(Bucket="alice-guarded")\nprint(1)');
    const wrong = {
      ...aliceKey,
      secret: `${aliceKey.secret.slice(0, -1)}${aliceKey.secret.endsWith('A') ? 'B' : 'A'}`,
    };
    expect(await errorOf(wrong)).toBe('SignatureDoesNotMatch');
    expect(await errorOf({ access: 'AKIDNOTAKEYATALL0000', secret: aliceKey.secret })).toBe('SignatureDoesNotMatch');
    expect(await guardedKeys()).toEqual([]);
  });

  it('when the user is disabled, then its key is refused on the next request, and works again once enabled', async () => {
    expect(await errorOf(aliceKey)).toBeNull();
    expect(await world.stack.patchUser(alice.id, { enabled: false })).toBe(202);
    expect(await errorOf(aliceKey)).toBe('SignatureDoesNotMatch');
    expect(await world.stack.patchUser(alice.id, { enabled: true })).toBe(202);
    expect(await errorOf(aliceKey)).toBeNull();
  });

  it("when the credential is deleted, then it is refused on the next request while the user's other key still works", async () => {
    const spare = await credentialFor(world.stack, alice);
    expect(await errorOf(spare)).toBeNull();
    const gone = await fetch(`${world.stack.apiUrl}${spare.uri}`, {
      method: 'DELETE',
      headers: { Authorization: ADMIN_AUTH },
    });
    expect(gone.status).toBe(204);
    expect(await errorOf(spare)).toBe('SignatureDoesNotMatch');
    expect(await errorOf(aliceKey)).toBeNull();
  });

  // s3api puts every request in the account of the credential's project (AUTH_<user>); S3 has no
  // way to name another account, except s3token's `<access key>:<account>` form, which asks for
  // another project's account. keystoneauth then decides as for any token: the reseller role
  // (superusers) may act on every account, others only on their own.
  it("when a superuser's key names another account, then Swift's reseller rules let it in, and refuse an ordinary user", async () => {
    const root = await world.stack.createUser('root', 'root-s3-interop-password', { is_superuser: true });
    const bob = await world.stack.createUser('bob', 'bob-s3-interop-password-1');
    const rootKey = await credentialFor(world.stack, root);
    const bobKey = await credentialFor(world.stack, bob);
    await boto3(
      home,
      world.endpoint,
      REGION,
      aliceKey,
      's3.create_bucket(Bucket="alice-reseller")\ns3.put_object(Bucket="alice-reseller", Key="k", Body=b"alice")\nprint(1)',
    );
    const list = (key: S3Key) =>
      boto3(
        home,
        world.endpoint,
        REGION,
        key,
        'r = {}\ntry:\n    r["keys"] = [o["Key"] for o in s3.list_objects_v2(Bucket="alice-reseller").get("Contents", [])]\nexcept botocore.exceptions.ClientError as e:\n    r["error"] = e.response["Error"]["Code"]\nprint(json.dumps(r))',
      );
    // Their own accounts have no such bucket.
    expect((await list(rootKey)).result).toEqual({ error: 'NoSuchBucket' });
    expect((await list(bobKey)).result).toEqual({ error: 'NoSuchBucket' });
    // Naming alice's account: the reseller gets in, bob does not.
    expect((await list({ ...rootKey, access: `${rootKey.access}:alice` })).result).toEqual({ keys: ['k'] });
    expect((await list({ ...bobKey, access: `${bobKey.access}:alice` })).result).toEqual({ error: 'AccessDenied' });
  });
});

describe('S3 through a Swift proxy whose s3token sends no service token', () => {
  let world: Awaited<ReturnType<typeof startS3World>>;
  let home: ClientHome;
  let key: S3Key;

  beforeAll(async () => {
    home = new ClientHome();
    // Swift releases without the s3tokens service-auth fix cannot send a token: the gateway must
    // be told not to ask for one (CAIRN_S3TOKENS_REQUIRE_SERVICE_TOKEN=false).
    world = await startS3World({ serviceAuth: false }, { s3tokensRequireServiceToken: false });
    key = await credentialFor(world.stack, await world.stack.createUser('carol', ALICE_PW));
  });
  afterAll(async () => {
    await world?.close();
    home?.close();
  });

  it('when the gateway does not require the token, then awscli works as with one', async () => {
    ok(await aws(home, world.endpoint, REGION, key, ['s3', 'mb', 's3://carol-untokened']), 'aws s3 mb', world.swift);
    expect(ok(await aws(home, world.endpoint, REGION, key, ['s3', 'ls']), 'aws s3 ls', world.swift).stdout).toContain(
      'carol-untokened',
    );
  });

  it('when the gateway requires the token that this proxy cannot send, then every S3 request is refused', async () => {
    const strict = await startS3World({ serviceAuth: false });
    try {
      const strictKey = await credentialFor(strict.stack, await strict.stack.createUser('dave', ALICE_PW));
      const r = await aws(home, strict.endpoint, REGION, strictKey, ['s3', 'ls']);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/SignatureDoesNotMatch/);
    } finally {
      await strict.close();
    }
  });
});

describe('S3 through a Swift proxy that caches secrets (secret_cache_duration)', () => {
  // Long enough for the first three requests below to land inside it on a busy machine.
  const CACHE_SECONDS = 15;
  let world: Awaited<ReturnType<typeof startS3World>>;
  let home: ClientHome;

  beforeAll(async () => {
    home = new ClientHome();
    world = await startS3World({ serviceAuth: true, secretCacheDuration: CACHE_SECONDS });
  });
  afterAll(async () => {
    await world?.close();
    home?.close();
  });

  // s3token fetches the secret with the service token from the gateway's OS-EC2 API and then checks
  // signatures itself: a deleted credential keeps working on that proxy until the cache expires,
  // and not after.
  it('when a cached credential is deleted, then this proxy accepts it until its cache expires and refuses it after, while a wrong secret stays refused', async () => {
    const erin = await world.stack.createUser('erin', ALICE_PW);
    const key = await credentialFor(world.stack, erin);
    const put = async (k: S3Key) =>
      (await boto3(home, world.endpoint, REGION, k, 'print(json.dumps(error_code(lambda: s3.list_buckets())))')).result;
    expect(await put(key)).toBeNull();
    // The proxy cached the secret during that request, so by now: its cache ends at the latest
    // CACHE_SECONDS from here (measured from before the request, a slow client start would eat the margin).
    const cachedAt = Date.now();
    expect(await put({ ...key, secret: `${key.secret.slice(0, -1)}${key.secret.endsWith('A') ? 'B' : 'A'}` })).toBe(
      'SignatureDoesNotMatch',
    );
    expect(
      (await fetch(`${world.stack.apiUrl}${key.uri}`, { method: 'DELETE', headers: { Authorization: ADMIN_AUTH } }))
        .status,
    ).toBe(204);
    expect(await put(key)).toBeNull();
    expect(world.swift.logs()).not.toMatch(/Unable to cache secret/);
    await new Promise((r) => setTimeout(r, Math.max(0, cachedAt + (CACHE_SECONDS + 1) * 1000 - Date.now())));
    expect(await put(key)).toBe('SignatureDoesNotMatch');
  });
});
