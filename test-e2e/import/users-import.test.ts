/**
 * `cairn users import` as an operator runs it: a real CLI process against a real management API
 * and gateway, on Postgres and on embedded PGlite. Hashes are made by passlib (Debian's
 * python3-passlib), as Keystone makes them; the imported users then log in through V1, V2 and V3,
 * and their first login replaces the foreign hash with Cairn's scrypt.
 *
 * @slow: imports and logins through three protocols, twice (jest.sequencer.js starts it first)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { cairn } from '../support/processes';
import { PASSLIB_MISSING, PASSLIB_PYTHON, passlibHashes } from '../support/passlib';
import { ADMIN_AUTH, ADMIN_AUTH_NAME, ADMIN_KEY, startStack, type Stack } from '../support/stack';

const withPasslib = PASSLIB_PYTHON ? describe : describe.skip;
if (!PASSLIB_PYTHON) console.warn(PASSLIB_MISSING);

const PW = {
  v1: 'keystone-user-one-password',
  v2: 'keystone-user-two-password',
  v3: 'keystone-user-three-password',
  pbkdf2: 'a-pbkdf2-sha512-password',
  scrypt: 'a-passlib-scrypt-password',
};
const PLAIN = 'a-plaintext-password-of-20+';

withPasslib.each(['postgres', 'pglite'] as const)('cairn users import on %s', (database) => {
  let stack: Stack;
  let work: string;
  let env: Record<string, string>;
  let hashes: string[];

  beforeAll(async () => {
    stack = await startStack({ database });
    work = mkdtempSync(join(tmpdir(), 'cairn-import-'));
    env = { CAIRN_API_URL: stack.apiUrl, CAIRN_API_KEY: `${ADMIN_AUTH_NAME}:${ADMIN_KEY}` };
    // Keystone: passlib's bcrypt with its default rounds (12); pbkdf2_sha512 and scrypt with passlib's defaults.
    hashes = passlibHashes([
      { scheme: 'bcrypt', password: PW.v1 },
      { scheme: 'bcrypt', password: PW.v2 },
      { scheme: 'bcrypt', password: PW.v3, settings: { ident: '2a' } },
      { scheme: 'pbkdf2_sha512', password: PW.pbkdf2 },
      { scheme: 'scrypt', password: PW.scrypt },
    ]);
  });
  afterAll(async () => {
    await stack?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const users = async (query: string) => {
    const res = await request(stack.apiUrl).get(`/api/v1/users/?limit=0&${query}`).set('Authorization', ADMIN_AUTH);
    return res.body.objects as Array<{
      user: string;
      password_scheme: string;
      is_superuser: boolean;
      enabled: boolean;
    }>;
  };
  const scheme = async (user: string) => (await users(`user=${encodeURIComponent(user)}`))[0]?.password_scheme;
  const gw = () => request(stack.gatewayUrl);
  const v1 = (user: string, key: string) => gw().get('/auth/v1.0').set('X-Auth-User', user).set('X-Auth-Key', key);
  const v2 = (user: string, password: string) =>
    gw()
      .post('/auth/v2.0/tokens')
      .send({ auth: { passwordCredentials: { username: user, password }, tenantName: user } });
  const v3 = (user: string, password: string) =>
    gw()
      .post('/auth/v3/auth/tokens')
      .send({
        auth: {
          identity: { methods: ['password'], password: { user: { name: user, domain: { id: 'default' }, password } } },
          scope: { project: { name: user, domain: { id: 'default' } } },
        },
      });

  it('when a CSV file is imported, then a dry run changes nothing, the run creates the good lines and refuses the bad ones by line, and a re-run skips them', async () => {
    const [b1, b2, b3, pbkdf2, scrypt] = hashes as [string, string, string, string, string];
    const csv = [
      'user,password,password_hash,is_superuser,enabled',
      `ks-v1,,${b1},false,true`,
      `ks-v2,,${b2},,`,
      `ks-v3,,${b3},true,`,
      `ks-pbkdf2,,${pbkdf2},,`,
      // passlib's scrypt hash holds commas (ln=16,r=8,p=1): quoted, as CSV needs.
      `ks-scrypt,,"${scrypt}",,`,
      `plain,${PLAIN},,,false`,
      'short,too-short,,,',
      'badhash,,$2b$04$not-a-hash,,',
      `both,${PLAIN},${b1},,`,
      `ks-v1,,${b1},,`,
      'only,two',
      `"quoted, name",${PLAIN},,,`,
    ].join('\n');
    const file = join(work, 'users.csv');
    writeFileSync(file, `${csv}\n`);
    const before = (await users('')).length;

    const refusedParams = await cairn(['users', 'import', '--cluster', 'default', file], {
      ...env,
      CAIRN_PASSWORD_HASH_PARAMS: 'ln=9,r=8,p=1',
    });
    // A setting the import cannot hash with is refused with the other settings, before anything is read.
    expect(refusedParams.out).toContain(
      'CAIRN_PASSWORD_HASH_PARAMS="ln=9,r=8,p=1": scrypt\'s memory (128·N·r bytes) must be at least 1 MiB; ln=9,r=8,p=1 needs 0.5 MiB — ',
    );
    expect(refusedParams.code).toBe(1);
    expect((await users('')).length).toBe(before);

    const dry = await cairn(['users', 'import', '--cluster', 'default', '--dry-run', file], env);
    expect(dry.out).toContain('line 2: ks-v1: would be created (bcrypt).');
    expect(dry.out).toContain('line 4: ks-v3: would be created (bcrypt, superuser).');
    expect(dry.out).toContain('line 7: plain: would be created (password, hashed with scrypt, disabled).');
    expect(dry.out).toContain(
      'Dry run: 7 user(s) would be created, 0 skipped (already exist), 5 refused. Nothing was changed.',
    );
    expect(dry.code).toBe(1);
    expect((await users('')).length).toBe(before);

    const run = await cairn(['users', 'import', '--cluster', 'default', file], env);
    expect(run.out).toContain('line 2: ks-v1: created (bcrypt).');
    expect(run.out).toContain('line 5: ks-pbkdf2: created (pbkdf2-sha512).');
    expect(run.out).toContain('line 6: ks-scrypt: created (passlib-scrypt).');
    expect(run.out).toContain('line 7: plain: created (scrypt).');
    expect(run.out).toContain('line 13: quoted, name: created (scrypt).');
    expect(run.out).toContain("line 8: refused: The 'password' field must be at least 20 characters long.");
    expect(run.out).toMatch(
      /line 9: refused: The 'password_hash' field must be a password hash in one of the accepted formats/,
    );
    expect(run.out).toContain('line 10: refused: Give either a password or a password_hash, not both.');
    expect(run.out).toContain("line 11: refused: user 'ks-v1' appears again (first on line 2).");
    expect(run.out).toContain('line 12: refused: 2 field(s), but the header names 5.');
    expect(run.out).toMatch(/7 user\(s\) created, 0 skipped \(already exist\), 5 refused, in [\d.]+ s\./);
    expect(run.out).not.toContain(PLAIN);
    expect(run.code).toBe(1);
    const made = await users('user__startswith=ks-');
    expect(made.map((u) => [u.user, u.password_scheme, u.is_superuser]).sort()).toEqual([
      ['ks-pbkdf2', 'pbkdf2-sha512', false],
      ['ks-scrypt', 'passlib-scrypt', false],
      ['ks-v1', 'bcrypt', false],
      ['ks-v2', 'bcrypt', false],
      ['ks-v3', 'bcrypt', true],
    ]);
    expect((await users('user=plain'))[0]).toMatchObject({ enabled: false, password_scheme: 'scrypt' });
    // Hashed by the CLI with the CAIRN_PASSWORD_HASH_PARAMS it runs with (the tests' cheap ones).
    const [plain] = await stack.db('storage_users').where({ username: 'plain' }).select('password_hash');
    expect(plain.password_hash).toMatch(/^\$scrypt\$ln=10,r=8,p=1\$/);

    const again = await cairn(['users', 'import', '--cluster', 'default', file], env);
    expect(again.out).toContain("line 2: ks-v1: skipped, a user of that name already exists in cluster 'default'.");
    expect(again.out).toContain("line 7: plain: skipped, a user of that name already exists in cluster 'default'.");
    expect(again.out).toContain('0 user(s) created, 7 skipped (already exist), 5 refused');
  });

  it('when imported users log in through V1, V2 and V3, then the foreign hash verifies, is replaced by scrypt, and the same password keeps working', async () => {
    expect((await v1('ks-v1', 'wrong-password-of-twenty')).status).toBe(401);
    expect(await scheme('ks-v1')).toBe('bcrypt');
    expect((await v1('ks-v1', PW.v1)).status).toBe(200);
    expect(await scheme('ks-v1')).toBe('scrypt');
    // Re-hashed as the gateway makes new hashes: with its CAIRN_PASSWORD_HASH_PARAMS (the stack's).
    const [rehashed] = await stack.db('storage_users').where({ username: 'ks-v1' }).select('password_hash');
    expect(rehashed.password_hash).toMatch(/^\$scrypt\$ln=10,r=8,p=1\$/);
    expect((await v1('ks-v1', PW.v1)).status).toBe(200);

    expect((await v2('ks-v2', PW.v2)).status).toBe(200);
    expect(await scheme('ks-v2')).toBe('scrypt');
    const v3Token = await v3('ks-v3', PW.v3);
    expect(v3Token.status).toBe(201);
    expect(await scheme('ks-v3')).toBe('scrypt');
    expect(v3Token.body.token.roles.map((r: { name: string }) => r.name)).toContain('ResellerAdmin');

    expect((await v3('ks-pbkdf2', PW.pbkdf2)).status).toBe(201);
    expect((await v1('ks-scrypt', PW.scrypt)).status).toBe(200);
    expect(
      (await users('password_scheme__in=bcrypt,pbkdf2-sha512,passlib-scrypt')).filter((u) => u.user.startsWith('ks-')),
    ).toEqual([]);
    expect((await v2('ks-pbkdf2', 'not-the-pbkdf2-password')).status).toBe(401);
    // Six checks of imported hashes (bcrypt at Keystone's cost 12: about 0.5 s each) and two of Cairn's.
  }, 30_000);

  it('when a JSON lines file has a line that is not JSON, then that line is refused and the others are created', async () => {
    const file = join(work, 'users.jsonl');
    writeFileSync(
      file,
      [
        `{"user": "json-a", "password_hash": ${JSON.stringify(hashes[3])}}`,
        '{not json',
        '',
        `{"user": "json-b", "password": "${PLAIN}", "is_superuser": true}`,
        '{"user": "json-c", "pasword": "typo"}',
      ].join('\n'),
    );
    const run = await cairn(['users', 'import', '--cluster', '1', file], env);
    expect(run.out).toContain('line 1: json-a: created (pbkdf2-sha512).');
    expect(run.out).toContain('line 2: refused: not a JSON object');
    expect(run.out).toContain('line 4: json-b: created (scrypt).');
    expect(run.out).toContain("line 5: refused: unknown field(s) 'pasword'");
    expect((await users('user=json-b'))[0]?.is_superuser).toBe(true);
  });

  it("when tempauth's proxy-server.conf is imported, then each account with one user becomes a user named after it, and the others are listed with the reason", async () => {
    const conf = [
      '[pipeline:main]',
      'pipeline = catch_errors tempauth proxy-server',
      '',
      '[filter:tempauth]',
      'use = egg:swift#tempauth',
      'user_admin_admin = admin-key-long-enough-1234 .admin .reseller_admin',
      'user_test_tester = testing .admin',
      'user_shared_alice = shared-alice-key-0123456789 .admin',
      'user_shared_bob = shared-bob-key-01234567890',
      'user_solo_one = solo-key-long-enough-123456 http://127.0.0.1:8080/v1/AUTH_solo',
      `user64_${Buffer.from('un_der').toString('base64url')}_${Buffer.from('x').toString('base64url')} = under-key-long-enough-12345`,
      '',
      '[app:proxy-server]',
      'use = egg:swift#proxy',
    ].join('\n');
    const file = join(work, 'proxy-server.conf');
    writeFileSync(file, `${conf}\n`);
    const run = await cairn(['users', 'import', '--cluster', 'default', '--tempauth', file], env);
    expect(run.out).toContain('[filter:tempauth] user_admin_admin: admin: created (scrypt).');
    expect(run.out).toContain('[filter:tempauth] user_solo_one: solo: created (scrypt).');
    expect(run.out).toMatch(/user64_\S+: un_der: created \(scrypt\)\./);
    expect(run.out).toContain(
      '[filter:tempauth] user_test_tester: refused: the key of test:tester is shorter than 20 characters',
    );
    expect(run.out).toContain(
      "[filter:tempauth] user_shared_alice: refused: account 'shared' has 2 users (alice, bob)",
    );
    expect(run.out).toContain("[filter:tempauth] user_shared_bob: refused: account 'shared' has 2 users (alice, bob)");
    expect(run.out).not.toContain('solo-key-long-enough');
    expect((await users('user=admin'))[0]?.is_superuser).toBe(true);
    expect((await users('user=solo'))[0]?.is_superuser).toBe(false);
    // tempauth's X-Auth-User was account:user; Cairn's is the account's name, with the same key.
    const login = await v1('solo', 'solo-key-long-enough-123456');
    expect(login.status).toBe(200);
    expect(login.headers['x-storage-url']).toBe('http://127.0.0.1:8080/v1/AUTH_solo');
  });

  it("when a tempauth user's client logs in over V1 as account:user, as it did with tempauth, then it gets its account; any other user name after the account is refused", async () => {
    const conf = [
      '[filter:tempauth]',
      'use = egg:swift#tempauth',
      'user_ops_olga = ops-olga-key-long-enough-1234 .admin',
    ];
    const file = join(work, 'ops-proxy-server.conf');
    writeFileSync(file, `${conf.join('\n')}\n`);
    const run = await cairn(['users', 'import', '--cluster', 'default', '--tempauth', file], env);
    expect(run.out).toContain('[filter:tempauth] user_ops_olga: ops: created (scrypt).');
    const KEY = 'ops-olga-key-long-enough-1234';

    const olga = await v1('ops:olga', KEY);
    expect(olga.status).toBe(200);
    expect(olga.headers['x-storage-url']).toBe('http://127.0.0.1:8080/v1/AUTH_ops');
    // The token is the user ops's on its own account: the owner's role, as tempauth's .admin gave.
    const valid = await gw()
      .get('/auth/v3/auth/tokens')
      .set('X-Auth-Token', olga.headers['x-auth-token'] as string)
      .set('X-Subject-Token', olga.headers['x-auth-token'] as string);
    expect(valid.status).toBe(200);
    expect(valid.body.token.user.name).toBe('ops');
    expect(valid.body.token.roles.map((r: { name: string }) => r.name)).toEqual(['swiftoperator']);
    // As before: the account's name alone, or twice, with the same key.
    expect((await v1('ops', KEY)).status).toBe(200);
    expect((await v1('ops:ops', KEY)).status).toBe(200);

    // Only the imported name: any other after "ops:" is that user, not ops, and there is none.
    for (const given of ['ops:wrong', 'ops:Olga', 'ops: olga', 'ops:', 'other:olga']) {
      const res = await v1(given, KEY);
      expect({ given, status: res.status }).toEqual({ given, status: 401 });
      expect(res.headers['x-auth-token']).toBeUndefined();
    }
    // A Cairn user named olga logs in with its own password only: ops:olga names the tempauth user.
    const made = await request(stack.apiUrl)
      .post('/api/v1/users/')
      .set('Authorization', ADMIN_AUTH)
      .send({ cluster: '/api/v1/clusters/1/', user: 'olga', password: 'olga-own-password-0123456789' });
    expect(made.status).toBe(201);
    expect((await v1('ops:olga', 'olga-own-password-0123456789')).status).toBe(401);
    expect((await v1('olga', 'olga-own-password-0123456789')).status).toBe(200);
    expect((await v1('ops:olga', KEY)).status).toBe(200);
  });
});
