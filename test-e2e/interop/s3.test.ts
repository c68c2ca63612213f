/**
 * S3 through a stock Swift proxy: Swift's s3api turns S3 requests into Swift ones, its s3token
 * posts each request's string to sign and signature to the Cairn gateway's /v3/s3tokens, and
 * keystoneauth authorizes the identity the gateway answers. The credentials come from the
 * management API; the clients are Debian's awscli (SigV4), boto3 (SigV4, presigned URLs) and s3cmd
 * (SigV2). Management API, gateway, Postgres and Redis are real too.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import { ADMIN_AUTH, startStack, type Stack, type StackOptions } from '../support/stack';
import { aws, boto3, ClientHome, s3cmd, type Run, type S3Key } from './s3-clients';
import { startSwiftCluster, type S3Options, type SwiftCluster } from './swift-cluster';

const SERVICE_PW = 'swift-service-password-01';
const ALICE_PW = 'alice-s3-interop-password';
const REGION = 'us-east-1';
const S3_KEYS = `interop:${randomBytes(32).toString('base64')}`;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** A Swift with s3api + s3token in front of keystoneauth, and a Cairn stack whose gateway it asks. */
async function startS3World(s3: S3Options, gateway: StackOptions['gateway'] = {}): Promise<{ swift: SwiftCluster; stack: Stack; endpoint: string; hostPort: string }> {
  const gwPort = await freePort();
  const gwAuth = `http://127.0.0.1:${gwPort}/auth`;
  const swift = await startSwiftCluster({
    pipeline: 'keystone',
    keystone: { authUrl: `${gwAuth}/v3`, username: 'swift-service', password: SERVICE_PW, projectName: 'swift-service', tokenCacheTime: 1, s3: { location: REGION, ...s3 } },
  });
  const stack = await startStack({
    database: 'postgres',
    redis: true,
    s3SecretKeys: S3_KEYS,
    gateway: { port: gwPort, publicUrl: gwAuth, storageUrl: `${swift.proxyUrl}/v1`, ...gateway },
  });
  await stack.createUser('swift-service', SERVICE_PW, { is_superuser: true });
  return { swift, stack, endpoint: swift.proxyUrl, hostPort: new URL(swift.proxyUrl).host };
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
    await world?.stack.close();
    await world?.swift.stop();
    home?.close();
  });

  const awsAs = (key: S3Key, args: string[]) => aws(home, world.endpoint, REGION, key, args);

  it('when awscli (SigV4) makes a bucket, puts, lists, gets and deletes objects, then each step works and the bytes come back', async () => {
    const body = randomBytes(100_000);
    const file = `${home.dir}/upload.bin`;
    writeFileSync(file, body);
    ok(await awsAs(aliceKey, ['s3', 'mb', 's3://alice-aws']), 'aws s3 mb', world.swift);
    ok(await awsAs(aliceKey, ['s3', 'cp', file, 's3://alice-aws/dir/upload.bin']), 'aws s3 cp up', world.swift);
    expect(ok(await awsAs(aliceKey, ['s3', 'ls', 's3://alice-aws/dir/']), 'aws s3 ls', world.swift).stdout).toMatch(/100000 upload\.bin/);
    ok(await awsAs(aliceKey, ['s3', 'cp', 's3://alice-aws/dir/upload.bin', `${home.dir}/download.bin`]), 'aws s3 cp down', world.swift);
    expect(readFileSync(`${home.dir}/download.bin`).equals(body)).toBe(true);
    ok(await awsAs(aliceKey, ['s3', 'rm', 's3://alice-aws/dir/upload.bin']), 'aws s3 rm', world.swift);
    ok(await awsAs(aliceKey, ['s3', 'rb', 's3://alice-aws']), 'aws s3 rb', world.swift);
    expect(ok(await awsAs(aliceKey, ['s3api', 'list-buckets', '--query', 'Buckets[].Name', '--output', 'text']), 'aws list-buckets', world.swift).stdout).not.toContain('alice-aws');
  });
});
