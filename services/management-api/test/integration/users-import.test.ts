import { hashPassword } from '@cairn/domain';
import { ADMIN_AUTH, DB_KINDS, countRows, createOperator, startTestApp, type TestApp } from '../support/harness';

/** Made by passlib 1.7.4 (bcrypt through Keystone's default ident, pbkdf2_sha512 and scrypt defaults). */
const HASHES = {
  bcrypt: '$2b$04$mg6ee4TepYJKmiGWRMGL4OUSck7Clc7z5WSRrx66rXpvWi3mRu3/S',
  'pbkdf2-sha512':
    '$pbkdf2-sha512$25000$f08pJWRMidE6R2jtPafUWg$etF1jpysf6F5uScQV1dFw8ez6h2fVT4djlty8r9VDwlwVoDn9YuRsq2p3k5hzMttxqrkUk9Z8TmrcN21oJ5HFQ',
  'passlib-scrypt': '$scrypt$ln=16,r=8,p=1$QKiVknKOcc5ZC6H0fs9Zaw$IX0ITKeHpM4OK8sq6yjN7hbyZCq62S3/jy/05ZQ7Et4',
} as const;

describe.each(DB_KINDS)('importing users on %s', (kind) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(kind);
  });
  afterAll(() => app.close());
  const http = () => app.http();
  const post = (body: Record<string, unknown>, auth = ADMIN_AUTH) =>
    http().post('/api/v1/users/').set('Authorization', auth).send(body);
  const bulk = (objects: unknown[], auth = ADMIN_AUTH) =>
    http().patch('/api/v1/users/').set('Authorization', auth).send({ objects });

  describe('POST with a password_hash', () => {
    it.each(Object.entries(HASHES))(
      'when a %s hash is given, then it is stored as it is, never shown, and the scheme is',
      async (scheme, hash) => {
        const res = await post({ cluster: 1, user: `imp-${scheme}`, password_hash: hash });
        expect(res.status).toBe(201);
        expect(res.body.password_scheme).toBe(scheme);
        expect(res.text).not.toContain(hash);
        expect(res.body).not.toHaveProperty('password');
        const row = await app
          .db('storage_users')
          .where({ username: `imp-${scheme}` })
          .first();
        expect(row.password_hash).toBe(hash);
        expect(row.password_scheme).toBe(scheme);
        const shown = await http().get(`/api/v1/users/${res.body.id}/`).set('Authorization', ADMIN_AUTH);
        expect(shown.body.password_scheme).toBe(scheme);
        expect(shown.text).not.toContain(hash);
      },
    );

    it("when Cairn's own scrypt hash is given, then its scheme is scrypt", async () => {
      const res = await post({
        cluster: 1,
        user: 'imp-own',
        password_hash: await hashPassword('correct horse battery staple', { logN: 10, r: 8, p: 1 }),
      });
      expect(res.status).toBe(201);
      expect(res.body.password_scheme).toBe('scrypt');
    });

    it('when a user is created with a hash, then its audit record holds the scheme and not the hash', async () => {
      await post({ cluster: 1, user: 'imp-audited', password_hash: HASHES.bcrypt });
      const audit = await app.db('audit_log').where({ target_name: 'imp-audited' }).first();
      expect(JSON.stringify(audit)).not.toContain(HASHES.bcrypt);
      expect(audit.after.password_scheme).toBe('bcrypt');
    });

    it('when both a password and a hash are given, or a malformed hash, then 400 says why and nothing is created', async () => {
      const before = await countRows(app.db, 'storage_users');
      const both = await post({
        cluster: 1,
        user: 'imp-both',
        password: 'a-long-password-of-twenty',
        password_hash: HASHES.bcrypt,
      });
      expect(both.status).toBe(400);
      expect(both.body.error).toBe('Give either a password or a password_hash, not both.');
      const bad = await post({ cluster: 1, user: 'imp-bad', password_hash: '$2b$04$tooshort' });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatch(
        /^The 'password_hash' field must be a password hash in one of the accepted formats: .*bcrypt/,
      );
      expect(bad.text).not.toContain('tooshort');
      const costly = await post({
        cluster: 1,
        user: 'imp-costly',
        password_hash: HASHES.bcrypt.replace('$04$', '$31$'),
      });
      expect(costly.status).toBe(400);
      expect(await countRows(app.db, 'storage_users')).toBe(before);
    });

    it('when a reader sends a hash, then 403', async () => {
      const reader = await createOperator(app, 'imp-reader', 'reader');
      expect((await post({ cluster: 1, user: 'imp-by-reader', password_hash: HASHES.bcrypt }, reader)).status).toBe(
        403,
      );
      expect((await bulk([{ cluster: 1, user: 'imp-by-reader', password_hash: HASHES.bcrypt }], reader)).status).toBe(
        403,
      );
    });

    it('when users are filtered on password_scheme, then only those with that scheme are listed', async () => {
      const res = await http().get('/api/v1/users/?password_scheme=bcrypt&limit=0').set('Authorization', ADMIN_AUTH);
      expect(res.status).toBe(200);
      const names = (res.body.objects as Array<{ user: string }>).map((u) => u.user).sort();
      expect(names).toEqual(['imp-audited', 'imp-bcrypt']);
      const foreign = await http()
        .get('/api/v1/users/?password_scheme__in=pbkdf2-sha512,passlib-scrypt')
        .set('Authorization', ADMIN_AUTH);
      expect(foreign.body.meta.total_count).toBe(2);
    });
  });

  describe('PATCH on the list (bulk create)', () => {
    it('when objects are sent, then the new ones are created with one audit record each and the taken names are skipped', async () => {
      await post({ cluster: 1, user: 'bulk-exists', password_hash: HASHES.bcrypt });
      const audits = await countRows(app.db, 'audit_log');
      const res = await bulk([
        { cluster: '/api/v1/clusters/1/', user: 'bulk-a', password_hash: HASHES.bcrypt, is_superuser: true },
        { cluster: 1, user: 'bulk-exists', password_hash: HASHES['passlib-scrypt'] },
        { cluster: 1, user: 'bulk-b', password_hash: HASHES['pbkdf2-sha512'], enabled: false },
        { cluster: 1, user: 'bulk-a', password_hash: HASHES['pbkdf2-sha512'] },
      ]);
      expect(res.status).toBe(202);
      expect(
        (res.body.objects as Array<Record<string, unknown>>).map((u) => [
          u.user,
          u.password_scheme,
          u.is_superuser,
          u.enabled,
        ]),
      ).toEqual([
        ['bulk-a', 'bcrypt', true, true],
        ['bulk-b', 'pbkdf2-sha512', false, false],
      ]);
      expect(res.body.skipped).toEqual([
        {
          cluster: '/api/v1/clusters/1/',
          reason: 'A user of that name already exists in the cluster.',
          user: 'bulk-exists',
        },
        {
          cluster: '/api/v1/clusters/1/',
          reason: 'A user of that name already exists in the cluster.',
          user: 'bulk-a',
        },
      ]);
      expect(res.text).not.toContain('$2b$');
      expect(await countRows(app.db, 'audit_log')).toBe(audits + 2);
      expect((await app.db('storage_users').where({ username: 'bulk-exists' }).first()).password_scheme).toBe('bcrypt');
      const counted = await http()
        .get('/api/v1/users/?cluster=1&user__startswith=bulk-')
        .set('Authorization', ADMIN_AUTH);
      expect(counted.body.meta.total_count).toBe(3);
    });

    it('when one object is invalid or carries a password, then 400 names it and nothing is created', async () => {
      const before = await countRows(app.db, 'storage_users');
      const bad = await bulk([
        { cluster: 1, user: 'bulk-ok', password_hash: HASHES.bcrypt },
        { cluster: 1, user: 'bulk-bad', password_hash: 'nope' },
      ]);
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatch(/objects\[1\]\.password_hash/);
      const plain = await bulk([{ cluster: 1, user: 'bulk-plain', password: 'a-long-password-of-twenty' }]);
      expect(plain.status).toBe(400);
      expect(plain.body.error).toMatch(/takes a password_hash, not a password/);
      const unknownCluster = await bulk([{ cluster: 999, user: 'bulk-nowhere', password_hash: HASHES.bcrypt }]);
      expect(unknownCluster.status).toBe(400);
      expect(await countRows(app.db, 'storage_users')).toBe(before);
    });

    it('when more than 1000 objects are sent, then 400 says the limit', async () => {
      const many = Array.from({ length: 1001 }, (_, i) => ({
        cluster: 1,
        user: `many-${i}`,
        password_hash: HASHES.bcrypt,
      }));
      const res = await bulk(many);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('At most 1000 users can be created in one request.');
    });
  });
});
