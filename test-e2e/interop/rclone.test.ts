/**
 * rclone (Debian's `rclone`, its swift backend: ncw/swift) logging in to the gateway's Keystone V3
 * with an application credential, by id and by name with its user, and moving data through a real
 * Swift proxy whose keystonemiddleware validates the tokens at the gateway. The remote is configured
 * through RCLONE_CONFIG_<NAME>_* variables only; every address is on 127.0.0.1.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../support/processes';
import { startStack, type Stack } from '../support/stack';
import { ClientHome, run, type Run } from './s3-clients';
import { startSwiftCluster, type SwiftCluster } from './swift-cluster';

const RCLONE = '/usr/bin/rclone';
const ALICE_PW = 'alice-rclone-password-0001';
const SERVICE_PW = 'swift-service-password-0001';

interface Made {
  id: string;
  name: string;
  secret: string;
}

describe('rclone with application credentials against the gateway and a Swift proxy', () => {
  let swift: SwiftCluster;
  let stack: Stack;
  let home: ClientHome;
  let gwAuth: string;

  /** A V3 login at the gateway; the answer's status and token. */
  const login = async (identity: object) => {
    const res = await fetch(`${gwAuth}/v3/auth/tokens`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ auth: { identity } }),
    });
    await res.arrayBuffer();
    return { status: res.status, token: res.headers.get('x-subject-token') };
  };
  const aliceToken = async () =>
    (
      await login({
        methods: ['password'],
        password: { user: { name: 'alice', domain: { id: 'default' }, password: ALICE_PW } },
      })
    ).token!;

  /** alice makes a credential with her own token, as `openstack application credential create` does. */
  const make = async (name: string): Promise<Made> => {
    const res = await fetch(`${gwAuth}/v3/users/alice/application_credentials`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Auth-Token': await aliceToken() },
      body: JSON.stringify({ application_credential: { name } }),
    });
    if (res.status !== 201) throw new Error(`create ${name}: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { application_credential: Made }).application_credential;
  };

  /** `rclone <args>` with the remote `cairn:` defined by `remote` (RCLONE_CONFIG_CAIRN_<KEY>), failing fast. */
  const rclone = (remote: Record<string, string>, args: string[]): Promise<Run> => {
    const env: Record<string, string> = {
      HOME: home.dir,
      RCLONE_CONFIG: join(home.dir, 'rclone.conf'),
      RCLONE_CONFIG_CAIRN_TYPE: 'swift',
      RCLONE_CONFIG_CAIRN_AUTH: `${gwAuth}/v3`,
      RCLONE_CONFIG_CAIRN_AUTH_VERSION: '3',
      RCLONE_CONFIG_CAIRN_ENDPOINT_TYPE: 'public',
    };
    for (const [k, v] of Object.entries(remote)) env[`RCLONE_CONFIG_CAIRN_${k.toUpperCase()}`] = v;
    return run(RCLONE, ['--retries', '1', '--low-level-retries', '1', ...args], env);
  };
  const rcloneOk = async (remote: Record<string, string>, args: string[]) => {
    const r = await rclone(remote, args);
    if (r.code !== 0) throw new Error(`rclone ${args.join(' ')} failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
    return r.stdout;
  };
  const byId = (c: Made) => ({ application_credential_id: c.id, application_credential_secret: c.secret });
  const byName = (c: Made) => ({
    application_credential_name: c.name,
    application_credential_secret: c.secret,
    user: 'alice',
    domain: 'Default',
  });

  /** Up, list, down: the bytes that come back are the bytes that went up. */
  const roundTrip = async (remote: Record<string, string>, object: string) => {
    const data = randomBytes(3 * 1024 * 1024 + 17);
    const up = join(home.dir, `${object}.up`);
    const down = join(home.dir, `${object}.down`);
    writeFileSync(up, data);
    await rcloneOk(remote, ['copyto', up, `cairn:rclone/${object}`]);
    const listed = JSON.parse(await rcloneOk(remote, ['lsjson', 'cairn:rclone'])) as Array<{
      Path: string;
      Size: number;
    }>;
    expect(listed).toEqual(expect.arrayContaining([expect.objectContaining({ Path: object, Size: data.length })]));
    await rcloneOk(remote, ['copyto', `cairn:rclone/${object}`, down]);
    expect(readFileSync(down).equals(data)).toBe(true);
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
    });
    stack = await startStack({
      database: 'postgres',
      redis: true,
      gateway: { port: gwPort, publicUrl: gwAuth, storageUrl: `${swift.proxyUrl}/v1` },
    });
    await stack.createUser('swift-service', SERVICE_PW, { is_superuser: true });
    await stack.createUser('alice', ALICE_PW);
  });
  afterAll(async () => {
    await stack?.close();
    await swift?.stop();
    home?.close();
  });

  it("when rclone logs in with application_credential_id and _secret, then it copies a file up, lists it and copies back the same bytes into alice's account", async () => {
    const c = await make('rclone-by-id');
    await roundTrip(byId(c), 'by-id.bin');
    // It is alice's account: her password token sees the object at the proxy.
    const head = await fetch(`${swift.proxyUrl}/v1/AUTH_alice/rclone/by-id.bin`, {
      method: 'HEAD',
      headers: { 'X-Auth-Token': await aliceToken() },
    });
    expect(head.status).toBe(200);
  });

  it('when rclone logs in with application_credential_name, the user and its domain, then the same round trip works', async () => {
    await roundTrip(byName(await make('rclone-by-name')), 'by-name.bin');
  });

  it('when the credential is deleted, then rclone fails by id and by name, while another credential of alice still works', async () => {
    const doomed = await make('rclone-doomed');
    const other = await make('rclone-other');
    await rcloneOk(byId(doomed), ['lsf', 'cairn:']);
    await rcloneOk(byName(doomed), ['lsf', 'cairn:']);
    const res = await fetch(`${gwAuth}/v3/users/alice/application_credentials/${doomed.id}`, {
      method: 'DELETE',
      headers: { 'X-Auth-Token': await aliceToken() },
    });
    expect(res.status).toBe(204);
    expect(
      (
        await login({
          methods: ['application_credential'],
          application_credential: { id: doomed.id, secret: doomed.secret },
        })
      ).status,
    ).toBe(401);
    for (const remote of [byId(doomed), byName(doomed)]) {
      const failed = await rclone(remote, ['lsf', 'cairn:']);
      expect(failed.code).not.toBe(0);
      expect(failed.stderr).toMatch(/Authorization Failed|401/i);
    }
    expect(await rcloneOk(byId(other), ['lsf', 'cairn:'])).toContain('rclone/');
  });
});
