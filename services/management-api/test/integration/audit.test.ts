import { parseStringPromise } from 'xml2js';
import type { Response } from 'supertest';
import {
  ADMIN,
  ADMIN_AUTH,
  DB_KINDS,
  PASSWORD,
  countRows,
  createCluster,
  createOperator,
  createUser,
  cheapHashPassword,
  startTestApp,
  type TestApp,
} from '../support/harness';

type Entry = Record<string, unknown> & {
  id: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
};

const NEW_PASSWORD = 'another-long-password-for-alice';
const REPORT = {
  policies: [
    { index: 0, name: 'gold', default: true },
    { index: 1, name: 'silver' },
  ],
  devices: [
    { node: '10.0.0.1:6200', device: 'sdb1', policies: ['gold'], used_bytes: 1e12, avail_bytes: 3e12 },
    { node: '10.0.0.1:6200', device: 'sdb2', policies: ['gold', 'silver'], used_bytes: 2e12, avail_bytes: 2e12 },
    { node: '10.0.0.2:6200', device: 'sdb3', policies: ['silver'], mounted: false },
  ],
};
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SECRET_NAMES = /^(password|password_?hash|api_?key|key|key_?hash(es)?)$/i;

function namesIn(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => namesIn(v, out));
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      namesIn(v, out);
    }
  }
  return out;
}

describe.each(DB_KINDS)('audit trail on %s', (kind) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(kind, { hashPassword: cheapHashPassword });
  });
  afterAll(() => app.close());

  const send = (method: 'post' | 'patch' | 'put' | 'delete', path: string, body?: object, auth = ADMIN_AUTH) => {
    const req = app.http()[method](path).set('Authorization', auth);
    return body === undefined ? req : req.send(body);
  };
  const get = (path: string, auth = ADMIN_AUTH) => app.http().get(path).set('Authorization', auth);
  const lastId = async (): Promise<number> => {
    const [row] = await app.db('audit_log').max({ m: 'id' });
    return Number((row as { m: string | number | null }).m ?? 0);
  };
  /** Entries written after `since`, oldest first, as the API shows them. */
  const entriesAfter = async (since: number): Promise<Entry[]> => {
    const res = await get(`/api/v1/audit/?id__gt=${since}&order_by=id&limit=0`);
    expect(res.status).toBe(200);
    return res.body.objects as Entry[];
  };
  /** Runs one write and returns its response and the single entry it left. */
  const oneEntry = async (write: () => PromiseLike<Response>): Promise<{ res: Response; entry: Entry }> => {
    const since = await lastId();
    const res = await write();
    const entries = await entriesAfter(since);
    expect(entries).toHaveLength(1);
    const entry = entries[0]!;
    expect(entry.request_id).toBe(res.headers['x-request-id']);
    expect(entry.time).toMatch(ISO);
    expect(entry.resource_uri).toBe(`/api/v1/audit/${entry.id}/`);
    return { res, entry };
  };
  const byRoot = { operator: ADMIN.name, operator_id: 1 };

  describe('every write leaves exactly one entry', () => {
    let userId: string;
    let clusterId: number;
    let operatorId: number;
    let keyId: string;
    const secrets: string[] = [PASSWORD, NEW_PASSWORD, ADMIN.key];

    it('when the app was bootstrapped, then the first admin and the default cluster are recorded as done by bootstrap, without a request', async () => {
      const res = await get('/api/v1/audit/?operator=bootstrap&order_by=id');
      expect(res.status).toBe(200);
      const [op, cluster] = res.body.objects as Entry[];
      expect(res.body.objects).toHaveLength(2);
      expect(op).toMatchObject({
        operator: 'bootstrap',
        operator_id: null,
        request_id: null,
        action: 'create',
        target_type: 'operators',
        target_id: '1',
        target_name: 'root',
        target_uri: '/api/v1/operators/1/',
        before: null,
      });
      expect(op!.after).toMatchObject({
        id: 1,
        name: 'root',
        role: 'admin',
        clusters: [],
        resource_uri: '/api/v1/operators/1/',
      });
      expect((op!.after!.api_keys as Array<Record<string, unknown>>)[0]).toEqual({
        created_at: expect.stringMatching(ISO),
        id: '1',
        operator: '/api/v1/operators/1/',
        resource_uri: '/api/v1/operators/1/keys/1/',
      });
      expect(cluster).toMatchObject({
        operator: 'bootstrap',
        operator_id: null,
        request_id: null,
        action: 'create',
        target_type: 'clusters',
        target_id: '1',
        target_name: 'default',
        before: null,
      });
    });

    it("when a user is created, then one create entry with the user as after, its request id (the caller's), and no password", async () => {
      const { res, entry } = await oneEntry(() =>
        app
          .http()
          .post('/api/v1/users/')
          .set('Authorization', ADMIN_AUTH)
          .set('X-Request-Id', 'audit-test-create-alice')
          .send({ cluster: '/api/v1/clusters/1/', user: 'alice', password: PASSWORD }),
      );
      expect(res.status).toBe(201);
      userId = res.body.id as string;
      expect(entry).toEqual({
        ...byRoot,
        id: expect.any(String),
        time: expect.stringMatching(ISO),
        action: 'create',
        target_type: 'users',
        target_id: userId,
        target_name: 'alice',
        target_uri: `/api/v1/users/${userId}/`,
        before: null,
        after: {
          cluster: '/api/v1/clusters/1/',
          enabled: true,
          id: userId,
          is_superuser: false,
          password_scheme: 'scrypt',
          quota_bytes: null,
          quota_bytes_policy: null,
          quota_count: null,
          quota_count_policy: null,
          resource_uri: `/api/v1/users/${userId}/`,
          user: 'alice',
        },
        request_id: 'audit-test-create-alice',
        resource_uri: expect.any(String),
      });
      secrets.push((await app.db('storage_users').where({ id: userId }).first()).password_hash as string);
    });

    it('when a user is patched, then before and after differ in what changed, and a new password shows only as password_changed', async () => {
      const { res, entry } = await oneEntry(() =>
        send('patch', `/api/v1/users/${userId}/`, { enabled: false, password: NEW_PASSWORD }),
      );
      expect(res.status).toBe(202);
      expect(entry).toMatchObject({
        ...byRoot,
        action: 'update',
        target_type: 'users',
        target_id: userId,
        target_name: 'alice',
      });
      expect(entry.before).toEqual({
        cluster: '/api/v1/clusters/1/',
        enabled: true,
        id: userId,
        is_superuser: false,
        password_scheme: 'scrypt',
        quota_bytes: null,
        quota_bytes_policy: null,
        quota_count: null,
        quota_count_policy: null,
        resource_uri: `/api/v1/users/${userId}/`,
        user: 'alice',
      });
      expect(entry.after).toEqual({
        cluster: '/api/v1/clusters/1/',
        enabled: false,
        id: userId,
        is_superuser: false,
        password_changed: true,
        password_scheme: 'scrypt',
        quota_bytes: null,
        quota_bytes_policy: null,
        quota_count: null,
        quota_count_policy: null,
        resource_uri: `/api/v1/users/${userId}/`,
        user: 'alice',
      });
      expect(entry.request_id).toMatch(/^[0-9a-f-]{36}$/);
      secrets.push((await app.db('storage_users').where({ id: userId }).first()).password_hash as string);
    });

    it('when a user is deleted, then one delete entry holds the user as before and null after', async () => {
      const { res, entry } = await oneEntry(() => send('delete', `/api/v1/users/${userId}`));
      expect(res.status).toBe(204);
      expect(entry).toMatchObject({
        ...byRoot,
        action: 'delete',
        target_type: 'users',
        target_id: userId,
        target_name: 'alice',
        after: null,
      });
      expect(entry.before).toMatchObject({ enabled: false, user: 'alice' });
    });

    it('when a cluster is created, patched and deleted, then three entries with the right snapshots', async () => {
      const created = await oneEntry(() =>
        send('post', '/api/v1/clusters/', {
          name: 'audited',
          auth_url: 'https://a.example.com/auth',
          storage_url: 'https://a.example.com/v1',
        }),
      );
      expect(created.res.status).toBe(201);
      clusterId = created.res.body.id as number;
      expect(created.entry).toMatchObject({
        ...byRoot,
        action: 'create',
        target_type: 'clusters',
        target_id: String(clusterId),
        target_name: 'audited',
        target_uri: `/api/v1/clusters/${clusterId}/`,
        before: null,
      });
      // The reconciler's reading of the cluster's Swift, and its users' quotas added up, are shown, not audited.
      const {
        quota_support: _support,
        quota_bytes_total: _total,
        quota_bytes_policy_total: _policyTotal,
        health: _health,
        ...shown
      } = created.res.body as Record<string, unknown>;
      expect(created.entry.after).toEqual(shown);

      const patched = await oneEntry(() =>
        send('patch', `/api/v1/clusters/${clusterId}/`, { name: 'audited-2', region: 'RegionTwo' }),
      );
      expect(patched.res.status).toBe(202);
      expect(patched.entry).toMatchObject({ action: 'update', target_name: 'audited-2' });
      expect(patched.entry.before).toEqual(shown);
      expect(patched.entry.after).toEqual({ ...shown, name: 'audited-2', region: 'RegionTwo' });

      const deleted = await oneEntry(() => send('delete', `/api/v1/clusters/${clusterId}/`));
      expect(deleted.res.status).toBe(204);
      expect(deleted.entry).toMatchObject({
        action: 'delete',
        target_type: 'clusters',
        target_id: String(clusterId),
        target_name: 'audited-2',
        after: null,
      });
      expect(deleted.entry.before).toEqual(patched.entry.after);
    });

    it('when devices are reported twice, then each report leaves one replace_devices entry with counts, not devices', async () => {
      const first = await oneEntry(() => send('put', '/api/v1/clusters/1/devices/', REPORT));
      expect(first.res.status).toBe(204);
      expect(first.entry).toMatchObject({
        ...byRoot,
        action: 'replace_devices',
        target_type: 'clusters',
        target_id: '1',
        target_name: 'default',
        target_uri: '/api/v1/clusters/1/devices/',
        before: { device_count: 0, policy_count: 0 },
        after: { device_count: 3, policy_count: 2 },
      });
      const second = await oneEntry(() =>
        send('put', '/api/v1/clusters/1/devices/', {
          policies: REPORT.policies.slice(0, 1),
          devices: REPORT.devices.slice(0, 1),
        }),
      );
      expect(second.res.status).toBe(204);
      expect(second.entry.before).toEqual({ device_count: 3, policy_count: 2 });
      expect(second.entry.after).toEqual({ device_count: 1, policy_count: 1 });
      expect(JSON.stringify(second.entry)).not.toContain('sdb');
    });

    it('when an operator is created, patched, given a key, loses it and is deleted, then five entries, none with a key', async () => {
      const created = await oneEntry(() => send('post', '/api/v1/operators/', { name: 'auditee', role: 'reader' }));
      expect(created.res.status).toBe(201);
      operatorId = created.res.body.id as number;
      secrets.push(created.res.body.api_key as string);
      expect(created.entry).toMatchObject({
        ...byRoot,
        action: 'create',
        target_type: 'operators',
        target_id: String(operatorId),
        target_name: 'auditee',
        target_uri: `/api/v1/operators/${operatorId}/`,
        before: null,
      });
      expect(created.entry.after).toMatchObject({ name: 'auditee', role: 'reader', clusters: [] });

      const patched = await oneEntry(() =>
        send('patch', `/api/v1/operators/${operatorId}/`, { role: 'admin', clusters: ['/api/v1/clusters/1/'] }),
      );
      expect(patched.res.status).toBe(202);
      expect(patched.entry).toMatchObject({
        action: 'update',
        before: { role: 'reader', clusters: [] },
        after: { role: 'admin', clusters: ['/api/v1/clusters/1/'] },
      });

      const added = await oneEntry(() => send('post', `/api/v1/operators/${operatorId}/keys/`));
      expect(added.res.status).toBe(201);
      keyId = added.res.body.id as string;
      secrets.push(added.res.body.key as string);
      expect(added.entry).toMatchObject({
        ...byRoot,
        action: 'add_key',
        target_type: 'operators',
        target_id: String(operatorId),
        target_name: 'auditee',
        target_uri: `/api/v1/operators/${operatorId}/keys/${keyId}/`,
        before: null,
        after: {
          id: keyId,
          operator: `/api/v1/operators/${operatorId}/`,
          resource_uri: `/api/v1/operators/${operatorId}/keys/${keyId}/`,
          created_at: expect.stringMatching(ISO),
        },
      });
      for (const row of await app.db('api_keys').select('key_hash'))
        secrets.push(
          Buffer.from(row.key_hash as Uint8Array).toString('hex'),
          Buffer.from(row.key_hash as Uint8Array).toString('base64'),
        );

      const revoked = await oneEntry(() => send('delete', `/api/v1/operators/${operatorId}/keys/${keyId}/`));
      expect(revoked.res.status).toBe(204);
      expect(revoked.entry).toMatchObject({
        action: 'delete_key',
        target_uri: `/api/v1/operators/${operatorId}/keys/${keyId}/`,
        before: added.entry.after,
        after: null,
      });

      const deleted = await oneEntry(() => send('delete', `/api/v1/operators/${operatorId}/`));
      expect(deleted.res.status).toBe(204);
      expect(deleted.entry).toMatchObject({
        action: 'delete',
        target_type: 'operators',
        target_id: String(operatorId),
        after: null,
        before: patched.entry.after,
      });
    });

    it('when every kind of write has been made, then no entry holds a password, a password hash, an API key or a key hash', async () => {
      const rows = await app.db('audit_log').select('*');
      expect(rows.length).toBeGreaterThanOrEqual(15);
      const text = JSON.stringify(rows);
      for (const secret of secrets) {
        expect(secret.length).toBeGreaterThan(10);
        expect(text).not.toContain(secret);
      }
      // The hashes' distinctive parts, whatever encoding they might have been copied in.
      expect(text).not.toMatch(/\$scrypt\$/);
      for (const row of rows) {
        const snapshots = [row.before, row.after].map((s) => (typeof s === 'string' ? JSON.parse(s) : s));
        expect(namesIn(snapshots).filter((n) => SECRET_NAMES.test(n))).toEqual([]);
      }
      // And through the API, as an operator reads it.
      const api = await get('/api/v1/audit/?limit=0');
      for (const secret of secrets) expect(api.text).not.toContain(secret);
    });

    it('when a write comes from the operator create command, then the entry names cli', async () => {
      const { createOperatorWithKey } = await import('../../src/routes/operators');
      const { key } = await app.db.transaction((trx) =>
        createOperatorWithKey(trx, { name: 'from-cli', role: 'reader', clusterIds: [] }),
      );
      const res = await get('/api/v1/audit/?target_name=from-cli');
      expect(res.body.objects).toHaveLength(1);
      expect(res.body.objects[0]).toMatchObject({
        operator: 'cli',
        operator_id: null,
        request_id: null,
        action: 'create',
        target_type: 'operators',
      });
      expect(res.text).not.toContain(key);
    });
  });

  describe('reading the trail', () => {
    let all: Entry[];
    beforeAll(async () => {
      // A known history whatever ran before: two users, one deleted.
      await createUser(app, 'reader-fixture-1');
      const u = await createUser(app, 'reader-fixture-2');
      await send('delete', `/api/v1/users/${u.id as string}/`);
      const res = await get('/api/v1/audit/?limit=0');
      all = res.body.objects as Entry[];
    });

    it('when listed without parameters, then the tastypie envelope, 20 per page, newest first', async () => {
      const res = await get('/api/v1/audit/');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body.meta).toEqual({
        limit: 20,
        next: all.length > 20 ? '/api/v1/audit/?limit=20&offset=20' : null,
        offset: 0,
        previous: null,
        total_count: all.length,
      });
      expect(all.length).toBe(await countRows(app.db, 'audit_log'));
      const ids = all.map((e) => BigInt(e.id));
      expect([...ids].sort((a, b) => (a < b ? 1 : a > b ? -1 : 0))).toEqual(ids);
      const times = all.map((e) => e.time as string);
      expect([...times].sort().reverse()).toEqual(times);
      expect(all[0]).toMatchObject({ action: 'delete', target_name: 'reader-fixture-2' });
    });

    it('when paged with limit and offset, then the slice and next/previous links follow', async () => {
      const res = await get('/api/v1/audit/?action=create&limit=2&offset=1');
      const creates = all.filter((e) => e.action === 'create');
      expect(res.body.objects.map((e: Entry) => e.id)).toEqual(creates.slice(1, 3).map((e) => e.id));
      expect(res.body.meta).toMatchObject({ limit: 2, offset: 1, total_count: creates.length, previous: null });
      expect(res.body.meta.next).toBe(creates.length > 3 ? '/api/v1/audit/?action=create&limit=2&offset=3' : null);
    });

    it.each([
      ['operator=root', (e: Entry) => e.operator === 'root'],
      ['operator=bootstrap', (e: Entry) => e.operator === 'bootstrap'],
      ['operator_id__isnull=true', (e: Entry) => e.operator_id === null],
      ['action=delete', (e: Entry) => e.action === 'delete'],
      ['action__in=delete,update', (e: Entry) => e.action === 'delete' || e.action === 'update'],
      ['target_type=users', (e: Entry) => e.target_type === 'users'],
      [
        'target_type__in=operators&target_type__in=clusters',
        (e: Entry) => e.target_type === 'operators' || e.target_type === 'clusters',
      ],
      ['target_name__startswith=reader-fixture', (e: Entry) => String(e.target_name).startsWith('reader-fixture')],
      ['request_id=audit-test-create-alice', (e: Entry) => e.request_id === 'audit-test-create-alice'],
      [
        'target_uri__startswith=/api/v1/operators/',
        (e: Entry) => String(e.target_uri).startsWith('/api/v1/operators/'),
      ],
    ])('when filtered by %s, then exactly the matching entries', async (query, match) => {
      const res = await get(`/api/v1/audit/?${query}&limit=0`);
      expect(res.status).toBe(200);
      const expected = all.filter(match).map((e) => e.id);
      expect(expected.length).toBeGreaterThan(0);
      expect(res.body.objects.map((e: Entry) => e.id)).toEqual(expected);
    });

    it('when filtered by target_type and target_id, then the history of that one object', async () => {
      const target = all.find((e) => e.target_name === 'reader-fixture-2')!;
      const res = await get(`/api/v1/audit/?target_type=users&target_id=${target.target_id as string}&order_by=id`);
      expect(res.body.objects.map((e: Entry) => e.action)).toEqual(['create', 'delete']);
    });

    it('when filtered by time with gte, gt, lte and lt, then the bounds are inclusive or exclusive as named', async () => {
      const pivot = all[Math.floor(all.length / 2)]!.time as string;
      const count = async (q: string) => {
        const res = await get(`/api/v1/audit/?${q}&limit=0`);
        expect(res.status).toBe(200);
        return res.body.meta.total_count as number;
      };
      const at = all.filter((e) => e.time === pivot).length;
      const after = all.filter((e) => (e.time as string) > pivot).length;
      const before = all.filter((e) => (e.time as string) < pivot).length;
      expect(await count(`time__gte=${pivot}`)).toBe(after + at);
      expect(await count(`time__gt=${pivot}`)).toBe(after);
      expect(await count(`time__lte=${pivot}`)).toBe(before + at);
      expect(await count(`time__lt=${pivot}`)).toBe(before);
      expect(await count(`time=${pivot}`)).toBe(at);
      expect(await count('time__gte=2000-01-01&time__lt=9999-01-01')).toBe(all.length);
      expect(await count('time__gte=9999-01-01')).toBe(0);
    });

    it('when a filter or ordering is bad, then 400 with a clear message, never a database error', async () => {
      const cases: Array<[string, string]> = [
        ['time__gte=yesterday', 'Invalid resource lookup data provided (mismatched type).'],
        ['time__gte=2026-02-30', 'Invalid resource lookup data provided (mismatched type).'],
        ['id=abc', 'Invalid resource lookup data provided (mismatched type).'],
        ['before=x', "The 'before' field does not allow filtering."],
        ['action__contains=x', "'contains' is not an allowed filter on the 'action' field."],
        ['order_by=nope', "No matching 'nope' field for ordering on."],
        ['limit=-1', "Invalid limit '-1' provided. Please provide a positive integer >= 0."],
      ];
      for (const [q, message] of cases) {
        const res = await get(`/api/v1/audit/?${q}`);
        expect([q, res.status, res.body.error]).toEqual([q, 400, message]);
      }
    });

    it('when ordered by id ascending or by operator, then that order', async () => {
      const asc = await get('/api/v1/audit/?order_by=id&limit=0');
      expect(asc.body.objects.map((e: Entry) => e.id)).toEqual([...all].reverse().map((e) => e.id));
      const byOp = await get('/api/v1/audit/?order_by=operator&order_by=-id&limit=0');
      const names = byOp.body.objects.map((e: Entry) => e.operator as string);
      expect(names).toEqual([...names].sort());
    });

    it('when one entry is read, then it equals its list form; an unknown or malformed id is 404', async () => {
      const entry = all[0]!;
      const res = await get(entry.resource_uri as string);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(entry);
      for (const id of ['999999', 'abc', '0', '99999999999999999999']) {
        const missing = await get(`/api/v1/audit/${id}/`);
        expect([id, missing.status]).toEqual([id, 404]);
        expect(missing.body.error).toContain('No audit entry with id');
      }
    });

    it('when XML is asked for, then the tastypie XML shape with snapshots as hashes and nulls typed', async () => {
      const list = await get('/api/v1/audit/?format=xml&action=delete&target_type=users&limit=1');
      expect(list.status).toBe(200);
      expect(list.headers['content-type']).toBe('application/xml; charset=utf-8');
      expect(list.text.startsWith("<?xml version='1.0' encoding='utf-8'?>\n<response><meta type=\"hash\">")).toBe(true);
      expect(list.text).toContain(
        '<objects type="list"><object><action>delete</action><after type="null"/><before type="hash"><cluster>/api/v1/clusters/1/</cluster><enabled type="boolean">True</enabled>',
      );
      await expect(parseStringPromise(list.text)).resolves.toBeTruthy();
      const detail = await app
        .http()
        .get(all[0]!.resource_uri as string)
        .set('Authorization', ADMIN_AUTH)
        .set('Accept', 'application/xml');
      expect(detail.status).toBe(200);
      expect(detail.text).toContain(`<object><action>delete</action>`);
      expect(detail.text).toContain(`<id>${all[0]!.id}</id>`);
      expect(detail.text).toContain('<operator_id type="integer">1</operator_id>');
    });

    it('when a reader or a cluster-limited admin asks, then 403; without a key, 401; and none of it is recorded', async () => {
      const since = await lastId();
      const reader = await createOperator(app, 'audit-reader', 'reader');
      const limited = await createOperator(app, 'audit-limited', 'admin', ['/api/v1/clusters/1/']);
      const afterSetup = await lastId();
      expect(afterSetup - since).toBe(2);
      for (const auth of [reader, limited]) {
        for (const path of ['/api/v1/audit/', all[0]!.resource_uri as string]) {
          const res = await get(path, auth);
          expect([path, res.status]).toEqual([path, 403]);
        }
      }
      expect((await app.http().get('/api/v1/audit/')).status).toBe(401);
      expect(
        (await app.http().get('/api/v1/audit/').set('Authorization', 'ApiKey root:wrong-key-wrong-key-wrong-key'))
          .status,
      ).toBe(401);
      expect(await lastId()).toBe(afterSetup);
    });

    it('when anything but GET is sent, then 405 with Allow: GET, and nothing changes', async () => {
      const before = await countRows(app.db, 'audit_log');
      for (const path of ['/api/v1/audit/', all[0]!.resource_uri as string]) {
        for (const method of ['post', 'put', 'patch', 'delete'] as const) {
          const res = await send(method, path, {});
          expect([method, path, res.status, res.headers.allow]).toEqual([method, path, 405, 'GET']);
        }
      }
      expect(await countRows(app.db, 'audit_log')).toBe(before);
      expect((await get(all[0]!.resource_uri as string)).body).toEqual(all[0]);
    });

    it('when the API is discovered, then audit is listed and its schema describes it', async () => {
      const root = await app.http().get('/api/v1/');
      expect(root.body.audit).toEqual({ list_endpoint: '/api/v1/audit/', schema: '/api/v1/audit/schema/' });
      const schema = await get('/api/v1/audit/schema/');
      expect(schema.status).toBe(200);
      expect(schema.body.allowed_list_http_methods).toEqual(['get']);
      expect(schema.body.filtering.time).toEqual(['exact', 'gt', 'gte', 'lt', 'lte']);
      expect(schema.body.fields.after.type).toBe('dict');
    });
  });

  describe('refused and failed writes leave no entry', () => {
    const unchanged = async (write: () => PromiseLike<Response>, status: number) => {
      const since = await lastId();
      const res = await write();
      // The body is shown when the status is not the expected one.
      expect(res.status === status ? status : `${res.status} ${res.text}`).toBe(status);
      expect(await lastId()).toBe(since);
      return res;
    };

    it('when writes are refused with 4xx, then nothing is recorded', async () => {
      const taken = await createUser(app, 'taken');
      const reader = await createOperator(app, 'refused-reader', 'reader');
      await unchanged(
        () => send('post', '/api/v1/users/', { cluster: '/api/v1/clusters/1/', user: 'taken', password: PASSWORD }),
        400,
      );
      await unchanged(
        () => send('post', '/api/v1/users/', { cluster: '/api/v1/clusters/1/', user: 'short', password: 'short' }),
        400,
      );
      await unchanged(
        () =>
          send(
            'post',
            '/api/v1/users/',
            { cluster: '/api/v1/clusters/1/', user: 'by-reader', password: PASSWORD },
            reader,
          ),
        403,
      );
      await unchanged(() => send('patch', `/api/v1/users/${taken.id as string}/`, { enabled: false }, reader), 403);
      await unchanged(() => send('patch', '/api/v1/users/999999/', { enabled: false }), 404);
      await unchanged(() => send('patch', `/api/v1/users/${taken.id as string}/`, { user: 'renamed' }), 400);
      await unchanged(() => send('delete', '/api/v1/users/999999/'), 404);
      await unchanged(
        () =>
          send('post', '/api/v1/clusters/', {
            name: 'default',
            auth_url: 'https://x/auth',
            storage_url: 'https://x/v1',
          }),
        400,
      );
      await unchanged(() => send('delete', '/api/v1/clusters/1/'), 400);
      await unchanged(() => send('patch', '/api/v1/clusters/999/', { region: 'X' }), 404);
      await unchanged(() => send('put', '/api/v1/clusters/1/devices/', { policies: [], devices: 'nope' }), 400);
      await unchanged(() => send('put', '/api/v1/clusters/1/devices/', REPORT, reader), 403);
      await unchanged(() => send('post', '/api/v1/operators/', { name: 'root', role: 'admin' }), 400);
      await unchanged(() => send('delete', '/api/v1/operators/1/keys/999999/'), 404);
      await unchanged(() => send('delete', '/api/v1/operators/9999/'), 404);
      expect((await app.db('storage_users').where({ username: 'taken' })).length).toBe(1);
    });

    it('when the change would remove the last global admin, then the refusal records nothing', async () => {
      const admins = await app
        .db('operators')
        .where({ role: 'admin' })
        .whereNotExists(app.db('operator_clusters').whereRaw('operator_clusters.operator_id = operators.id'));
      // Only root is a global admin in this app's history; the others are readers or limited.
      expect(admins.map((o) => o.name)).toEqual(['root']);
      const res = await unchanged(() => send('patch', '/api/v1/operators/1/', { role: 'reader' }), 400);
      expect(res.body.error).toContain('last admin');
    });

    describe('when the database refuses the audit insert (a real constraint violation)', () => {
      beforeAll(async () => {
        await app.db.raw(
          "ALTER TABLE audit_log ADD CONSTRAINT audit_test_refuse CHECK (request_id IS DISTINCT FROM 'refuse-audit')",
        );
      });
      afterAll(async () => {
        await app.db.raw('ALTER TABLE audit_log DROP CONSTRAINT audit_test_refuse');
      });
      const failing = (method: 'post' | 'patch' | 'put' | 'delete', path: string, body?: object) =>
        unchanged(() => {
          const req = app.http()[method](path).set('Authorization', ADMIN_AUTH).set('X-Request-Id', 'refuse-audit');
          return body === undefined ? req : req.send(body);
        }, 500);

      it('then no write of any kind is applied', async () => {
        const victim = await createUser(app, 'atomic-victim');
        const cluster = await createCluster(app, 'atomic-cluster');
        await createOperator(app, 'atomic-operator', 'reader');
        const atomicOperator = (await app.db('operators').where({ name: 'atomic-operator' }).first()).id as number;
        const operatorsBefore = await countRows(app.db, 'operators');
        const keysBefore = await countRows(app.db, 'api_keys');
        const devicesBefore = await countRows(app.db, 'devices');

        await failing('post', '/api/v1/users/', {
          cluster: '/api/v1/clusters/1/',
          user: 'never-created',
          password: PASSWORD,
        });
        expect(await app.db('storage_users').where({ username: 'never-created' })).toEqual([]);
        await failing('patch', `/api/v1/users/${victim.id as string}/`, { enabled: false, password: NEW_PASSWORD });
        const row = await app
          .db('storage_users')
          .where({ id: victim.id as string })
          .first();
        expect(row).toMatchObject({ enabled: true });
        expect(String(row.generation)).toBe('1');
        await failing('delete', `/api/v1/users/${victim.id as string}/`);
        expect(await app.db('storage_users').where({ id: victim.id as string })).toHaveLength(1);

        await failing('post', '/api/v1/clusters/', {
          name: 'never-cluster',
          auth_url: 'https://n/auth',
          storage_url: 'https://n/v1',
        });
        await failing('patch', `/api/v1/clusters/${cluster.id as number}/`, { name: 'never-renamed' });
        await failing('delete', `/api/v1/clusters/${cluster.id as number}/`);
        expect(
          (
            await app
              .db('clusters')
              .where({ id: cluster.id as number })
              .first()
          ).name,
        ).toBe('atomic-cluster');
        expect(await app.db('clusters').where({ name: 'never-cluster' })).toEqual([]);

        await failing('put', `/api/v1/clusters/${cluster.id as number}/devices/`, REPORT);
        expect(await countRows(app.db, 'devices')).toBe(devicesBefore);

        await failing('post', '/api/v1/operators/', { name: 'never-operator', role: 'reader' });
        await failing('patch', `/api/v1/operators/${atomicOperator}/`, {
          role: 'admin',
          clusters: ['/api/v1/clusters/1/'],
        });
        await failing('post', `/api/v1/operators/${atomicOperator}/keys/`);
        await failing(
          'delete',
          `/api/v1/operators/${atomicOperator}/keys/${(await app.db('api_keys').where({ operator_id: atomicOperator }).first()).id as string}/`,
        );
        await failing('delete', `/api/v1/operators/${atomicOperator}/`);
        expect(await countRows(app.db, 'operators')).toBe(operatorsBefore);
        expect(await countRows(app.db, 'api_keys')).toBe(keysBefore);
        expect(await app.db('operator_clusters').where({ operator_id: atomicOperator })).toEqual([]);
        expect((await get(`/api/v1/operators/${atomicOperator}/`)).body).toMatchObject({
          role: 'reader',
          clusters: [],
        });
      });
    });

    it('when the transaction fails at commit, after the audit insert, then neither the change nor the entry remains', async () => {
      // A deferred constraint trigger fails at COMMIT, i.e. after both the change and its entry were written.
      await app.db.raw(`CREATE FUNCTION audit_test_fail_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'refused at commit'; END $$`);
      await app.db
        .raw(`CREATE CONSTRAINT TRIGGER audit_test_commit AFTER INSERT ON audit_log DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW WHEN (NEW.request_id = 'fail-at-commit') EXECUTE FUNCTION audit_test_fail_at_commit()`);
      try {
        const victim = await createUser(app, 'commit-victim');
        const del = await unchanged(
          () =>
            app
              .http()
              .delete(`/api/v1/users/${victim.id as string}/`)
              .set('Authorization', ADMIN_AUTH)
              .set('X-Request-Id', 'fail-at-commit'),
          500,
        );
        expect(del.body).toEqual({
          error_message: 'Sorry, this request could not be processed. Please try again later.',
        });
        expect(await app.db('storage_users').where({ id: victim.id as string })).toHaveLength(1);
        // The same request without the fault goes through and is recorded once.
        const ok = await app
          .http()
          .delete(`/api/v1/users/${victim.id as string}/`)
          .set('Authorization', ADMIN_AUTH)
          .set('X-Request-Id', 'commit-ok');
        expect(ok.status).toBe(204);
        expect((await get('/api/v1/audit/?request_id=commit-ok')).body.objects).toHaveLength(1);
      } finally {
        await app.db.raw('DROP TRIGGER audit_test_commit ON audit_log');
        await app.db.raw('DROP FUNCTION audit_test_fail_at_commit()');
      }
    });
  });
});
