import { verifyPassword } from '@cairn/domain';
import {
  ADMIN_AUTH,
  DB_KINDS,
  PASSWORD,
  countRows,
  createCluster,
  cheapHashPassword,
  createUser,
  startTestApp,
  type TestApp,
} from '../support/harness';

/**
 * The users' resource on both database kinds. Its apps hash passwords with cheap scrypt parameters:
 * a default-cost hash takes about half a second of CPU and this file makes dozens of users; the stored
 * hash at the default cost has its own test below.
 */
describe.each(DB_KINDS)('users on %s', (kind) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(kind, { hashPassword: cheapHashPassword });
  });
  afterAll(() => app.close());

  const http = () => app.http();

  describe('POST /api/v1/users/', () => {
    it('when a valid JSON body is posted, then 201 with Location and the object including the password', async () => {
      const res = await http()
        .post('/api/v1/users/')
        .set('Authorization', ADMIN_AUTH)
        .send({ cluster: '/api/v1/clusters/1/', user: 'alice', password: PASSWORD });
      expect(res.status).toBe(201);
      const id = (res.body as { id: string }).id;
      expect(typeof id).toBe('string');
      expect(res.headers.location).toBe(`/api/v1/users/${id}/`);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body).toEqual({
        bytes_used: null,
        cluster: '/api/v1/clusters/1/',
        enabled: true,
        id,
        is_superuser: false,
        object_count: null,
        password: PASSWORD,
        password_scheme: 'scrypt',
        quota_applied_at: null,
        quota_bytes: null,
        quota_bytes_policy: null,
        quota_count: null,
        quota_count_policy: null,
        quota_error: null,
        quota_status: null,
        resource_uri: `/api/v1/users/${id}/`,
        usage_sampled_at: null,
        user: 'alice',
      });
      expect(
        res.text.startsWith('{"bytes_used": null, "cluster": "/api/v1/clusters/1/", "enabled": true, "id": '),
      ).toBe(true);
    });

    it('when an answer shows a password, then it tells caches not to keep it; other answers do not', async () => {
      const created = await http()
        .post('/api/v1/users/')
        .set('Authorization', ADMIN_AUTH)
        .send({ cluster: 1, user: 'nostore', password: PASSWORD });
      expect(created.headers['cache-control']).toBe('no-store');
      const id = (created.body as { id: string }).id;
      const changed = await http()
        .patch(`/api/v1/users/${id}/`)
        .set('Authorization', ADMIN_AUTH)
        .send({ password: `${PASSWORD}-2` });
      expect(changed.status).toBe(202);
      expect(changed.headers['cache-control']).toBe('no-store');
      const flagged = await http()
        .patch(`/api/v1/users/${id}/`)
        .set('Authorization', ADMIN_AUTH)
        .send({ enabled: false });
      expect(flagged.headers['cache-control']).toBeUndefined();
    });

    it('when a form-encoded body uses 1/0 booleans, then they are honoured', async () => {
      const res = await http()
        .post('/api/v1/users/')
        .set('Authorization', ADMIN_AUTH)
        .type('form')
        .send(`cluster=1&user=formuser&password=${PASSWORD}&is_superuser=1&enabled=0`);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        user: 'formuser',
        is_superuser: true,
        enabled: false,
        cluster: '/api/v1/clusters/1/',
      });
    });

    it('when a tastypie XML body is posted, then the user is created and XML can be asked back', async () => {
      const xml = `<?xml version='1.0' encoding='utf-8'?><object><cluster>/api/v1/clusters/1/</cluster><user>xmluser</user><password>${PASSWORD}</password><is_superuser type="boolean">True</is_superuser></object>`;
      const res = await http()
        .post('/api/v1/users/?format=xml')
        .set('Authorization', ADMIN_AUTH)
        .set('Content-Type', 'application/xml')
        .send(xml);
      expect(res.status).toBe(201);
      expect(res.headers['content-type']).toBe('application/xml; charset=utf-8');
      expect(res.text).toMatch(
        /^<\?xml version='1.0' encoding='utf-8'\?>\n<object><bytes_used type="null"\/><cluster>\/api\/v1\/clusters\/1\/<\/cluster><enabled type="boolean">True<\/enabled><id>\d+<\/id><is_superuser type="boolean">True<\/is_superuser><object_count type="null"\/><password>/,
      );
      expect(res.text).toContain('<user>xmluser</user></object>');
    });

    it('when the password has 19 characters, then 400 names the 20-character rule and nothing is written', async () => {
      const before = await countRows(app.db, 'storage_users');
      const res = await http()
        .post('/api/v1/users/')
        .set('Authorization', ADMIN_AUTH)
        .send({ cluster: '/api/v1/clusters/1/', user: 'shorty', password: 'a'.repeat(19) });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: "The 'password' field must be at least 20 characters long." });
      expect(await countRows(app.db, 'storage_users')).toBe(before);
    });

    it.each([
      ['a slash', 'a/b'],
      ['a colon', 'a:b'],
      ['a newline', 'a\nb'],
      ['a NUL', 'a\u0000b'],
      ['256 characters', 'x'.repeat(256)],
      ['nothing', ''],
    ])('when the username has %s, then 400 says what is allowed', async (_what, user) => {
      const res = await http()
        .post('/api/v1/users/')
        .set('Authorization', ADMIN_AUTH)
        .send({ cluster: 1, user, password: PASSWORD });
      expect(res.status).toBe(400);
      expect((res.body as { error: string }).error).toContain("no '/', no ':' and no control characters");
    });

    it("when the username is 251 Latin-1 characters (AUTH_<user> is then Swift's 256), then it is accepted", async () => {
      const user = 'ü'.repeat(250) + 'ÿ';
      const body = await createUser(app, user);
      expect(body.user).toBe(user);
    });

    it.each([
      ['252 characters', 'ü'.repeat(252), 'at most 256 characters in an account name'],
      ['a character beyond Latin-1', '用户', 'cannot create an account whose name has a character beyond Latin-1'],
      ['an emoji', 'party🎉user', 'beyond Latin-1'],
    ])(
      'when the username has %s, then 400 says why Swift could not use it and nothing is stored',
      async (_what, user, why) => {
        const before = await countRows(app.db, 'storage_users');
        const res = await http()
          .post('/api/v1/users/')
          .set('Authorization', ADMIN_AUTH)
          .send({ cluster: 1, user, password: PASSWORD });
        expect(res.status).toBe(400);
        expect((res.body as { error: string }).error).toContain(why);
        expect(await countRows(app.db, 'storage_users')).toBe(before);
      },
    );

    it('when a required field is missing, then 400 uses tastypie wording', async () => {
      const res = await http()
        .post('/api/v1/users/')
        .set('Authorization', ADMIN_AUTH)
        .send({ cluster: 1, user: 'nopass' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: "The 'password' field has no data and doesn't allow a default or null value.",
      });
    });

    it('when an unknown or read-only field is sent, then 400 names it', async () => {
      const unknown = await http()
        .post('/api/v1/users/')
        .set('Authorization', ADMIN_AUTH)
        .send({ cluster: 1, user: 'u1', password: PASSWORD, quota: 5 });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error).toContain("'quota'");
      const readOnly = await http()
        .post('/api/v1/users/')
        .set('Authorization', ADMIN_AUTH)
        .send({ cluster: 1, user: 'u1', password: PASSWORD, id: '7' });
      expect(readOnly.status).toBe(400);
      expect(readOnly.body.error).toContain("'id'");
    });

    it.each(['__proto__', 'constructor', 'prototype'])(
      'when a JSON, form or XML body has a %s field, then 400 as for any unknown field and nothing is written',
      async (key) => {
        const before = await countRows(app.db, 'storage_users');
        const expected = { error: `The '${key}' field is not allowed here.` };
        const json = await http()
          .post('/api/v1/users/')
          .set('Authorization', ADMIN_AUTH)
          .set('Content-Type', 'application/json')
          .send(`{"cluster": 1, "user": "proto-json", "password": "${PASSWORD}", "${key}": {"is_superuser": true}}`);
        expect([json.status, json.body]).toEqual([400, expected]);
        const form = await http()
          .post('/api/v1/users/')
          .set('Authorization', ADMIN_AUTH)
          .type('form')
          .send(`cluster=1&user=proto-form&password=${PASSWORD}&${key}=x`);
        expect([form.status, form.body]).toEqual([400, expected]);
        const xml = await http()
          .post('/api/v1/users/')
          .set('Authorization', ADMIN_AUTH)
          .set('Content-Type', 'application/xml')
          .send(
            `<object><cluster>1</cluster><user>proto-xml</user><password>${PASSWORD}</password><${key}>x</${key}></object>`,
          );
        expect([xml.status, xml.body]).toEqual([400, expected]);
        expect(await countRows(app.db, 'storage_users')).toBe(before);
      },
    );

    it.each(['constructor', '__proto__', 'hasOwnProperty', 'toString'])(
      'when an XML body has an element named %s once, then 400 names it as an unknown field, not as repeated',
      async (key) => {
        const res = await http()
          .post('/api/v1/users/')
          .set('Authorization', ADMIN_AUTH)
          .set('Content-Type', 'application/xml')
          .send(
            `<object><cluster>1</cluster><user>proto-xml</user><password>${PASSWORD}</password><${key}>x</${key}></object>`,
          );
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error: `The '${key}' field is not allowed here.` });
      },
    );

    it.each([
      ['a JSON object', `{"cluster": 1, "user": "curl-user", "password": "${PASSWORD}"}`],
      ['a JSON object holding & and =', `{"cluster": 1, "user": "curl-user", "password": "${PASSWORD}&x=y"}`],
      ['a JSON list', `[{"cluster": 1, "user": "curl-user", "password": "${PASSWORD}"}]`],
    ])(
      'when %s is sent as a form (curl -d without a Content-Type), then 415 says to send application/json and echoes nothing',
      async (_what, text) => {
        const res = await http().post('/api/v1/users/').set('Authorization', ADMIN_AUTH).type('form').send(text);
        expect(res.status).toBe(415);
        expect(res.body).toEqual({
          error:
            "The body looks like JSON but was sent as 'application/x-www-form-urlencoded' (what curl -d sends unless told otherwise); send it with the header 'Content-Type: application/json'.",
        });
        const patch = await http()
          .patch('/api/v1/clusters/1/')
          .set('Authorization', ADMIN_AUTH)
          .type('form')
          .send('{"region": "RegionTwo"}');
        expect(patch.status).toBe(415);
        expect(patch.body.error).toContain("'Content-Type: application/json'");
      },
    );

    it('when an unknown field name is long, then the message shows only its first 64 characters', async () => {
      const name = `x${'y'.repeat(99)}`;
      for (const send of [
        () =>
          http()
            .post('/api/v1/users/')
            .set('Authorization', ADMIN_AUTH)
            .type('form')
            .send(`cluster=1&user=long-field&password=${PASSWORD}&${name}=1`),
        () =>
          http()
            .post('/api/v1/users/')
            .set('Authorization', ADMIN_AUTH)
            .send({ cluster: 1, user: 'long-field', password: PASSWORD, [name]: 1 }),
      ]) {
        const res = await send();
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error: `The '${name.slice(0, 64)}…' field is not allowed here.` });
      }
    });

    it('when the cluster URI is unknown, then 400 says the cluster could not be found', async () => {
      const res = await http()
        .post('/api/v1/users/')
        .set('Authorization', ADMIN_AUTH)
        .send({ cluster: '/api/v1/clusters/9/', user: 'lost', password: PASSWORD });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: "Could not find the provided clusters object via resource URI '/api/v1/clusters/9/'.",
      });
    });

    it('when the body is not valid JSON, then 400 and a clear message', async () => {
      const res = await http()
        .post('/api/v1/users/')
        .set('Authorization', ADMIN_AUTH)
        .set('Content-Type', 'application/json')
        .send('{"user": ');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'Request is not valid JSON.' });
    });

    it('when the body type is unsupported, then 415', async () => {
      const res = await http()
        .post('/api/v1/users/')
        .set('Authorization', ADMIN_AUTH)
        .set('Content-Type', 'text/csv')
        .send('a,b');
      expect(res.status).toBe(415);
      expect(res.body.error).toMatch(/Unsupported content type/);
    });

    it('when the body is larger than the limit, then 413', async () => {
      const res = await http()
        .post('/api/v1/users/')
        .set('Authorization', ADMIN_AUTH)
        .send({ cluster: 1, user: 'big', password: 'p'.repeat(200_000) });
      expect(res.status).toBe(413);
      expect(res.body.error).toMatch(/too large/);
    });

    it('when the same name is created twice, then the second is a 400 naming the user and cluster', async () => {
      await createUser(app, 'dup');
      const res = await http()
        .post('/api/v1/users/')
        .set('Authorization', ADMIN_AUTH)
        .send({ cluster: 1, user: 'dup', password: PASSWORD });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: "A user named 'dup' already exists in cluster 'default'." });
    });

    it('when 20 creates of one name race, then exactly one 201 and one row', async () => {
      const results = await Promise.all(
        Array.from({ length: 20 }, () =>
          http()
            .post('/api/v1/users/')
            .set('Authorization', ADMIN_AUTH)
            .send({ cluster: 1, user: 'racer', password: PASSWORD }),
        ),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 400)).toHaveLength(19);
      const [row] = await app.db('storage_users').where({ username: 'racer' }).count({ count: '*' });
      expect(Number(row!.count)).toBe(1);
    });

    it('when the same name is used in another cluster, then it is allowed', async () => {
      const other = await createCluster(app, 'other-cluster');
      await createUser(app, 'shared-name');
      const res = await http()
        .post('/api/v1/users/')
        .set('Authorization', ADMIN_AUTH)
        .send({ cluster: other.resource_uri, user: 'shared-name', password: PASSWORD });
      expect(res.status).toBe(201);
      expect(res.body.cluster).toBe(other.resource_uri);
    });
  });

  describe('GET /api/v1/users/<id>/', () => {
    it('when the user exists, then 200 without the password', async () => {
      const created = await createUser(app, 'bob');
      const res = await http().get(`/api/v1/users/${created.id}/`).set('Authorization', ADMIN_AUTH);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...created, password: undefined });
      expect(res.body).not.toHaveProperty('password');
    });

    it.each(['999999', 'abc', '-1', '0', '99999999999999999999', '1.5'])(
      'when the id is %s, then 404 with a JSON error',
      async (id) => {
        const res = await http().get(`/api/v1/users/${id}/`).set('Authorization', ADMIN_AUTH);
        expect(res.status).toBe(404);
        expect(res.body.error).toMatch(/No user with id/);
      },
    );
  });

  describe('PATCH /api/v1/users/<id>/', () => {
    it('when enabled and is_superuser change, then 202 with the object, no password, and generation bumped', async () => {
      const created = await createUser(app, 'carol');
      const before = await app
        .db('storage_users')
        .where({ id: created.id as string })
        .first();
      const res = await http()
        .patch(`/api/v1/users/${created.id}/`)
        .set('Authorization', ADMIN_AUTH)
        .send({ enabled: false, is_superuser: true });
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ ...created, password: undefined, enabled: false, is_superuser: true });
      const after = await app
        .db('storage_users')
        .where({ id: created.id as string })
        .first();
      expect(Number(after.generation)).toBe(Number(before.generation) + 1);
    });

    it('when nothing really changes, then generation stays', async () => {
      const created = await createUser(app, 'steady');
      const res = await http()
        .patch(`/api/v1/users/${created.id}/`)
        .set('Authorization', ADMIN_AUTH)
        .send({ enabled: true });
      expect(res.status).toBe(202);
      const row = await app
        .db('storage_users')
        .where({ id: created.id as string })
        .first();
      expect(Number(row.generation)).toBe(1);
    });

    it('when the password changes, then the response shows it once and the new hash verifies', async () => {
      const created = await createUser(app, 'dave');
      const newPassword = 'another-long-password-0001';
      const res = await http()
        .patch(`/api/v1/users/${created.id}`)
        .set('Authorization', ADMIN_AUTH)
        .type('form')
        .send(`password=${newPassword}`);
      expect(res.status).toBe(202);
      expect(res.body.password).toBe(newPassword);
      const row = await app
        .db('storage_users')
        .where({ id: created.id as string })
        .first();
      await expect(verifyPassword(newPassword, row.password_hash)).resolves.toBe(true);
      expect(Number(row.generation)).toBe(2);
      const get = await http().get(`/api/v1/users/${created.id}/`).set('Authorization', ADMIN_AUTH);
      expect(get.body).not.toHaveProperty('password');
    });

    it('when the object is sent back as read with one field changed, then 202 and only that field changes', async () => {
      const created = await createUser(app, 'roundtrip');
      const read = await http().get(`/api/v1/users/${created.id}/`).set('Authorization', ADMIN_AUTH);
      const res = await http()
        .patch(`/api/v1/users/${created.id}/`)
        .set('Authorization', ADMIN_AUTH)
        .send({ ...read.body, enabled: false });
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ ...read.body, enabled: false });
      const row = await app
        .db('storage_users')
        .where({ id: created.id as string })
        .first();
      expect(row.enabled).toBe(false);
      expect(row.username).toBe('roundtrip');
    });

    it('when read-only fields are sent unchanged in other spellings, then they are accepted', async () => {
      const created = await createUser(app, 'spellings');
      const id = created.id as string;
      const res = await http()
        .patch(`/api/v1/users/${id}/`)
        .set('Authorization', ADMIN_AUTH)
        .send({
          id: Number(id),
          cluster: 1,
          resource_uri: `http://api.example.com/api/v1/users/${id}`,
          user: 'spellings',
          is_superuser: true,
        });
      expect(res.status).toBe(202);
      expect(res.body.is_superuser).toBe(true);
      const form = await http()
        .patch(`/api/v1/users/${id}/`)
        .set('Authorization', ADMIN_AUTH)
        .type('form')
        .send(`id=${id}&cluster=%2Fapi%2Fv1%2Fclusters%2F1%2F&enabled=0`);
      expect(form.status).toBe(202);
      expect(form.body.enabled).toBe(false);
    });

    it.each([
      ['user', { user: 'renamed' }],
      ['cluster', { cluster: '/api/v1/clusters/2/' }],
      ['id', { id: '987654321' }],
      ['resource_uri', { resource_uri: '/api/v1/users/987654321/' }],
    ])(
      'when the read-only field %s is sent with another value, then 400 names it and nothing changes',
      async (field, body) => {
        const created = await createUser(app, `ro-${field}`);
        const res = await http()
          .patch(`/api/v1/users/${created.id}/`)
          .set('Authorization', ADMIN_AUTH)
          .send({ ...body, enabled: false });
        expect(res.status).toBe(400);
        expect(res.body.error).toBe(`The '${field}' field is read-only and cannot be changed.`);
        const row = await app
          .db('storage_users')
          .where({ id: created.id as string })
          .first();
        expect(row.enabled).toBe(true);
      },
    );

    it('when a short password is sent with other changes, then nothing is applied', async () => {
      const created = await createUser(app, 'partial');
      const res = await http()
        .patch(`/api/v1/users/${created.id}/`)
        .set('Authorization', ADMIN_AUTH)
        .send({ enabled: false, password: 'short' });
      expect(res.status).toBe(400);
      const row = await app
        .db('storage_users')
        .where({ id: created.id as string })
        .first();
      expect(row.enabled).toBe(true);
    });

    it.each(['__proto__', 'constructor'])(
      'when a PATCH body has a %s field (JSON or form), then 400 and nothing changes',
      async (key) => {
        const user = await createUser(app, `patch-${key.replace(/_/g, '')}`);
        for (const send of [
          () =>
            http()
              .patch(`/api/v1/users/${user.id}/`)
              .set('Authorization', ADMIN_AUTH)
              .set('Content-Type', 'application/json')
              .send(`{"enabled": false, "${key}": {"x": 1}}`),
          () =>
            http()
              .patch(`/api/v1/users/${user.id}/`)
              .set('Authorization', ADMIN_AUTH)
              .type('form')
              .send(`enabled=false&${key}=x`),
        ]) {
          const res = await send();
          expect([res.status, res.body]).toEqual([400, { error: `The '${key}' field is not allowed here.` }]);
        }
        expect(
          (
            await app
              .db('storage_users')
              .where({ id: user.id as string })
              .first()
          ).enabled,
        ).toBe(true);
      },
    );

    it('when the user does not exist, then 404', async () => {
      const res = await http().patch('/api/v1/users/987654/').set('Authorization', ADMIN_AUTH).send({ enabled: false });
      expect(res.status).toBe(404);
    });
  });

  describe('DELETE /api/v1/users/<id>', () => {
    it('when deleted without the trailing slash, then 204, the row is gone, and the name can be created again', async () => {
      const created = await createUser(app, 'erin');
      const res = await http().delete(`/api/v1/users/${created.id}`).set('Authorization', ADMIN_AUTH);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(
        await app
          .db('storage_users')
          .where({ id: created.id as string })
          .first(),
      ).toBeUndefined();
      const again = await createUser(app, 'erin');
      expect(again.id).not.toBe(created.id);
    });

    it('when deleted with the trailing slash, then 204; a second delete is 404', async () => {
      const created = await createUser(app, 'frank');
      expect((await http().delete(`/api/v1/users/${created.id}/`).set('Authorization', ADMIN_AUTH)).status).toBe(204);
      expect((await http().delete(`/api/v1/users/${created.id}/`).set('Authorization', ADMIN_AUTH)).status).toBe(404);
    });
  });
});

describe("a user's stored password", () => {
  it('when a user is created, then only a memory-hard hash of the password is stored', async () => {
    // The hash does not depend on the database kind: one app, with the default scrypt parameters.
    const app = await startTestApp('postgres');
    try {
      const body = await createUser(app, 'hashcheck');
      const row = await app
        .db('storage_users')
        .where({ id: body.id as string })
        .first();
      expect(row.password_hash).not.toContain(PASSWORD);
      expect(row.password_hash).toMatch(/^\$scrypt\$ln=15,r=8,p=3\$/);
      await expect(verifyPassword(PASSWORD, row.password_hash)).resolves.toBe(true);
    } finally {
      await app.close();
    }
  });
});
