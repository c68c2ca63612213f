/**
 * The OpenStack client (Debian's python3-openstackclient: keystoneauth1 + keystoneclient) against
 * the gateway's Keystone OS-EC2 credential API: `openstack ec2 credentials create|list|show|delete`
 * log in with V3 from OS_* variables, find the identity endpoint in the token's catalog and call
 * it there. The credentials they make are checked through the gateway's s3tokens, as a Swift
 * proxy's s3token would. Management API, gateway, Postgres and Redis are real; no Swift is needed.
 */
import { randomBytes } from 'node:crypto';
import { MAX_S3_CREDENTIALS_PER_USER } from '@cairn/contract';
import { freePort } from '../support/processes';
import { startStack, type Stack } from '../support/stack';
import { signedBody } from '../s3/s3-client';
import { ClientHome, run, type Run } from './s3-clients';

const OPENSTACK = '/usr/bin/openstack';
const ALICE_PW = 'alice-openstack-password-01';
const BOB_PW = 'bob-openstack-password-0001';
const CAROL_PW = 'carol-openstack-password-01';

interface CliCredential {
  access: string;
  secret: string | null;
  project_id: string;
  user_id: string;
}
interface CliListed {
  Access: string;
  Secret: string | null;
  'Project ID': string;
  'User ID': string;
}

describe('the OpenStack client managing EC2 credentials through the Cairn gateway', () => {
  let stack: Stack;
  let home: ClientHome;
  let gwAuth: string;

  /** `openstack <args>` as `user`, with nothing from this process's environment or $HOME (no clouds.yaml, no OS_*). */
  const openstack = (user: string, password: string, args: string[]): Promise<Run> =>
    run(OPENSTACK, args, {
      HOME: home.dir,
      OS_AUTH_URL: `${gwAuth}/v3`,
      OS_USERNAME: user,
      OS_PASSWORD: password,
      OS_PROJECT_NAME: user,
      OS_USER_DOMAIN_ID: 'default',
      OS_PROJECT_DOMAIN_ID: 'default',
      OS_IDENTITY_API_VERSION: '3',
      OS_INTERFACE: 'public',
    });
  const asAlice = (...args: string[]) => openstack('alice', ALICE_PW, args);
  const asBob = (...args: string[]) => openstack('bob', BOB_PW, args);
  const asCarol = (...args: string[]) => openstack('carol', CAROL_PW, args);
  /** The JSON a successful `create`, `list` or `show` printed with `-f json` (`delete` takes no format). */
  const json = <T>(run: (...args: string[]) => Promise<Run>, ...args: string[]): Promise<T> =>
    run(...args, '-f', 'json').then((r) => {
      if (r.code !== 0) throw new Error(`openstack ${args.join(' ')} failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
      return JSON.parse(r.stdout) as T;
    });
  const s3tokens = (access: string, secret: string) =>
    fetch(`${gwAuth}/v3/s3tokens`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(signedBody(access, secret)),
    });

  beforeAll(async () => {
    home = new ClientHome();
    const gwPort = await freePort();
    gwAuth = `http://127.0.0.1:${gwPort}/auth`;
    stack = await startStack({
      database: 'postgres',
      redis: true,
      s3SecretKeys: `interop:${randomBytes(32).toString('base64')}`,
      // No Swift proxy here: s3tokens is called directly, so it needs no service token.
      gateway: { port: gwPort, publicUrl: gwAuth, s3tokensRequireServiceToken: false },
    });
    await stack.createUser('alice', ALICE_PW);
    await stack.createUser('bob', BOB_PW);
    await stack.createUser('carol', CAROL_PW);
  });
  afterAll(async () => {
    await stack?.close();
    home?.close();
  });

  it('when a user creates, lists, shows and deletes a credential, then the secret is shown once, signs S3 requests, and stops at the delete', async () => {
    const created = await json<CliCredential>(asAlice, 'ec2', 'credentials', 'create');
    expect(created).toMatchObject({
      user_id: 'alice',
      project_id: 'alice',
      access: expect.stringMatching(/^[A-Z0-9]{20}$/),
      secret: expect.stringMatching(/^\S{40}$/),
    });
    const secret = created.secret!;

    const listed = await json<CliListed[]>(asAlice, 'ec2', 'credentials', 'list');
    expect(listed).toEqual([{ Access: created.access, Secret: null, 'Project ID': 'alice', 'User ID': 'alice' }]);
    const shown = await json<CliCredential>(asAlice, 'ec2', 'credentials', 'show', created.access);
    expect(shown).toMatchObject({ access: created.access, secret: null, project_id: 'alice', user_id: 'alice' });

    const valid = await s3tokens(created.access, secret);
    expect(valid.status).toBe(200);
    expect(((await valid.json()) as { token: { user: { name: string } } }).token.user.name).toBe('alice');

    const deleted = await asAlice('ec2', 'credentials', 'delete', created.access);
    expect({ code: deleted.code, stderr: deleted.stderr }).toEqual({ code: 0, stderr: '' });
    expect(await json<CliListed[]>(asAlice, 'ec2', 'credentials', 'list')).toEqual([]);
    expect((await s3tokens(created.access, secret)).status).toBe(401);
    const gone = await asAlice('ec2', 'credentials', 'show', created.access);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain('EC2 access key not found.');
  });

  it("when a user already holds the most credentials, then another create fails with the gateway's sentence in the client's error", async () => {
    const made: string[] = [];
    for (let i = 0; i < MAX_S3_CREDENTIALS_PER_USER; i++)
      made.push((await json<CliCredential>(asCarol, 'ec2', 'credentials', 'create')).access);
    const refused = await asCarol('ec2', 'credentials', 'create');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      `User 'carol' already holds ${MAX_S3_CREDENTIALS_PER_USER} S3 credentials, the most one user may have; delete one first. (HTTP 409)`,
    );
    const listed = await json<CliListed[]>(asCarol, 'ec2', 'credentials', 'list');
    expect(listed.map((c) => c.Access).sort()).toEqual([...made].sort());
  });

  it("when another user holds a credential, then a user's list does not show it and show by its access key fails", async () => {
    const bobs = await json<CliCredential>(asBob, 'ec2', 'credentials', 'create');
    expect((await json<CliListed[]>(asBob, 'ec2', 'credentials', 'list')).map((c) => c.Access)).toEqual([bobs.access]);
    expect((await json<CliListed[]>(asAlice, 'ec2', 'credentials', 'list')).map((c) => c.Access)).not.toContain(
      bobs.access,
    );
    const peek = await asAlice('ec2', 'credentials', 'show', bobs.access, '-f', 'json');
    expect(peek.code).not.toBe(0);
    expect(peek.stderr).toContain('EC2 access key not found. (HTTP 404)');
  });
});
