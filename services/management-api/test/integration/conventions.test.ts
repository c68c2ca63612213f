import { parseStringPromise } from 'xml2js';
import { CAIRN_VERSION } from '@cairn/runtime';
import { ADMIN_AUTH, DB_KINDS, PASSWORD, createCluster, startTestApp, type TestApp } from '../support/harness';

/** Tastypie's list envelope, pagination, filtering, ordering, formats and method handling. */
describe.each(DB_KINDS)('tastypie conventions on %s', (kind) => {
  let app: TestApp;
  let second: Record<string, unknown>;
  const get = (path: string) => app.http().get(path).set('Authorization', ADMIN_AUTH);

  beforeAll(async () => {
    app = await startTestApp(kind);
    second = await createCluster(app, 'second');
    // 25 users in cluster 1, 5 in cluster 2; inserted directly (one real hash) to keep setup fast.
    const hash = await app.deps.hashPassword(PASSWORD);
    const rows = [
      ...Array.from({ length: 25 }, (_, i) => ({
        cluster_id: 1,
        username: `user${String(i).padStart(2, '0')}`,
        password_hash: hash,
      })),
      ...Array.from({ length: 5 }, (_, i) => ({
        cluster_id: second.id,
        username: `other${i}`,
        password_hash: hash,
        is_superuser: i === 0,
        enabled: i !== 4,
      })),
    ];
    await app.db('storage_users').insert(rows);
  });
  afterAll(() => app.close());

  describe('pagination', () => {
    it('when no limit is given, then 20 objects, total_count and a relative next URL', async () => {
      const res = await get('/api/v1/users/');
      expect(res.status).toBe(200);
      expect(res.body.meta).toEqual({
        limit: 20,
        next: '/api/v1/users/?limit=20&offset=20',
        offset: 0,
        previous: null,
        total_count: 30,
      });
      expect(res.body.objects).toHaveLength(20);
      expect(
        res.text.startsWith('{"meta": {"limit": 20, "next": "/api/v1/users/?limit=20&offset=20", "offset": 0'),
      ).toBe(true);
    });

    it('when on the last page, then next is null and previous keeps the other parameters in order', async () => {
      const res = await get('/api/v1/users/?format=json&cluster=%2Fapi%2Fv1%2Fclusters%2F1%2F&offset=20&limit=10');
      expect(res.body.meta).toEqual({
        limit: 10,
        next: null,
        offset: 20,
        previous: '/api/v1/users/?format=json&cluster=%2Fapi%2Fv1%2Fclusters%2F1%2F&limit=10&offset=10',
        total_count: 25,
      });
      expect(res.body.objects).toHaveLength(5);
    });

    it('when offset - limit is negative, then previous is null', async () => {
      const res = await get('/api/v1/users/?limit=10&offset=5');
      expect(res.body.meta.previous).toBeNull();
      expect(res.body.meta.next).toBe('/api/v1/users/?limit=10&offset=15');
      expect(res.body.objects[0].user).toBe('user05');
    });

    it.each([['0'], ['5000'], ['99999999999999999999999']])(
      'when limit=%s, then the cap of 1000 applies',
      async (limit) => {
        const res = await get(`/api/v1/users/?limit=${limit}`);
        expect(res.status).toBe(200);
        expect(res.body.meta.limit).toBe(1000);
        expect(res.body.objects).toHaveLength(30);
      },
    );

    it.each([
      ['limit=abc', "Invalid limit 'abc' provided. Please provide a positive integer."],
      ['limit=-1', "Invalid limit '-1' provided. Please provide a positive integer >= 0."],
      ['offset=x', "Invalid offset 'x' provided. Please provide an integer."],
      ['offset=-3', "Invalid offset '-3' provided. Please provide a positive integer >= 0."],
      ['limit=%3Cb%3E', "Invalid limit '&lt;b&gt;' provided. Please provide a positive integer."],
    ])('when %s, then 400 with tastypie wording', async (query, message) => {
      const res = await get(`/api/v1/users/?${query}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: message });
    });

    it('when total_count comes from the per-cluster counters, then it equals a real count', async () => {
      const real = async (clusterIds?: number[]) => {
        const q = app.db('storage_users').count({ n: '*' });
        if (clusterIds) q.whereIn('cluster_id', clusterIds);
        return Number((await q)[0]!.n);
      };
      expect((await get('/api/v1/users/')).body.meta.total_count).toBe(await real());
      expect((await get('/api/v1/users/?cluster=1')).body.meta.total_count).toBe(await real([1]));
      expect((await get(`/api/v1/users/?cluster__in=1,${second.id}`)).body.meta.total_count).toBe(
        await real([1, second.id as number]),
      );
      expect((await get(`/api/v1/users/?cluster=1&cluster__id=${second.id}`)).body.meta.total_count).toBe(0);
      const [extra] = await app
        .db('storage_users')
        .insert({ cluster_id: 1, username: 'counted', password_hash: 'x' })
        .returning('id');
      expect((await get('/api/v1/users/?cluster=1')).body.meta.total_count).toBe(await real([1]));
      await app
        .db('storage_users')
        .where({ id: (extra as { id: string }).id })
        .delete();
      expect((await get('/api/v1/users/?cluster=1')).body.meta.total_count).toBe(25);
    });

    it('when the offset is far past the end, then an empty page with exact meta', async () => {
      const res = await get('/api/v1/users/?offset=100000000000000000000');
      expect(res.status).toBe(200);
      expect(res.body.objects).toEqual([]);
      expect(res.body.meta.next).toBeNull();
      expect(res.body.meta.previous).toBe('/api/v1/users/?limit=20&offset=99999999999999999980');
    });
  });

  describe('filtering and ordering', () => {
    const users = async (query: string) => {
      const res = await get(`/api/v1/users/?${query}`);
      expect(res.status).toBe(200);
      return (res.body.objects as Array<{ user: string }>).map((o) => o.user);
    };

    it('when filtering by cluster as a URI or an id, then only that cluster', async () => {
      expect(await users(`cluster=${encodeURIComponent(String(second.resource_uri))}`)).toEqual([
        'other0',
        'other1',
        'other2',
        'other3',
        'other4',
      ]);
      expect(await users(`cluster=${second.id}`)).toHaveLength(5);
    });

    it('when chaining into the cluster, then cluster__name, cluster__id and cluster__uuid work', async () => {
      expect(await users('cluster__name=second')).toHaveLength(5);
      expect(await users(`cluster__id=${second.id}`)).toHaveLength(5);
      expect(await users(`cluster__uuid=${second.uuid}`)).toHaveLength(5);
      expect(await users('cluster__name__startswith=def&limit=0')).toHaveLength(25);
    });

    it('when using string lookups, then they match as tastypie does', async () => {
      expect(await users('user=user03')).toEqual(['user03']);
      expect(await users('user__iexact=USER03')).toEqual(['user03']);
      expect(await users('user__startswith=other')).toHaveLength(5);
      expect(await users('user__istartswith=OTHER')).toHaveLength(5);
      expect(await users('user__contains=er2')).toEqual(['user20', 'user21', 'user22', 'user23', 'user24', 'other2']);
      expect(await users('user__in=user01,other3&user__in=user02')).toEqual(['user01', 'user02', 'other3']);
      expect(await users('user__contains=%25')).toEqual([]);
    });

    it('when filtering booleans, then true/True/1 and false/False/0 work', async () => {
      expect(await users('is_superuser=true')).toEqual(['other0']);
      expect(await users('is_superuser=1')).toEqual(['other0']);
      expect(await users('enabled=False')).toEqual(['other4']);
      expect(await users('enabled=0&cluster__name=second')).toEqual(['other4']);
    });

    it('when filtering ids with comparisons, then ranges work', async () => {
      const all = await get('/api/v1/users/?limit=0');
      const ids = (all.body.objects as Array<{ id: string }>).map((o) => o.id);
      const res = await get(`/api/v1/users/?id__gt=${ids[27]}`);
      expect(res.body.meta.total_count).toBe(2);
    });

    it('when ordering, then order_by and -field apply with id as the tie-breaker', async () => {
      expect(await users('order_by=-user&limit=3')).toEqual(['user24', 'user23', 'user22']);
      expect(await users('order_by=-is_superuser&limit=1')).toEqual(['other0']);
    });

    it.each([
      ['password=x', "The 'password' field does not allow filtering."],
      ['user__regex=.*', "'regex' is not an allowed filter on the 'user' field."],
      ['enabled__startswith=t', "'startswith' is not an allowed filter on the 'enabled' field."],
      ['id=abc', 'Invalid resource lookup data provided (mismatched type).'],
      ['enabled=maybe', 'Invalid resource lookup data provided (mismatched type).'],
      ['cluster=/api/v1/users/1/', 'Invalid resource lookup data provided (mismatched type).'],
      ['order_by=color', "No matching 'color' field for ordering on."],
      ['order_by=password', "The 'password' field does not allow ordering."],
    ])('when %s, then 400 explains', async (query, message) => {
      const res = await get(`/api/v1/users/?${query}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: message });
    });

    it('when a query key is not a field, then it is ignored', async () => {
      expect((await get('/api/v1/users/?colour=blue&limit=0')).body.meta.total_count).toBe(30);
    });

    it('when filtering with SQL metacharacters, then they are just values', async () => {
      expect(await users(`user=${encodeURIComponent("x' OR '1'='1")}`)).toEqual([]);
      expect(await users(`cluster__name=${encodeURIComponent("'; DROP TABLE storage_users; --")}`)).toEqual([]);
      expect((await get('/api/v1/users/?limit=0')).body.meta.total_count).toBe(30);
    });

    it('when clusters are filtered by name, uuid and id, then they match', async () => {
      const byName = await get('/api/v1/clusters/?name=second');
      expect(byName.body.objects).toEqual([second]);
      expect((await get(`/api/v1/clusters/?uuid=${second.uuid}`)).body.objects).toEqual([second]);
      expect((await get(`/api/v1/clusters/?id=${second.id}`)).body.objects).toEqual([second]);
      expect((await get('/api/v1/clusters/?id=99999999999')).status).toBe(400);
    });
  });

  describe('filter values', () => {
    const UUID_ONE = 'takes a UUID, like 6ba7b810-9dad-11d1-80b4-00c04fd430c8.';
    it.each([
      ['/api/v1/clusters/?uuid=abc', `The 'uuid' filter ${UUID_ONE}`],
      ['/api/v1/clusters/?uuid=', `The 'uuid' filter ${UUID_ONE}`],
      [
        '/api/v1/clusters/?uuid__in=00000000-0000-4000-8000-000000000000,x',
        "The 'uuid__in' filter takes UUIDs separated by commas, each like 6ba7b810-9dad-11d1-80b4-00c04fd430c8.",
      ],
      ['/api/v1/users/?cluster__uuid=x', `The 'cluster__uuid' filter ${UUID_ONE}`],
      ['/api/v1/users/?user=%00', "The 'user' filter takes text without control characters."],
      ['/api/v1/users/?user__startswith=a%00', "The 'user__startswith' filter takes text without control characters."],
      ['/api/v1/users/?cluster__name=%1B', "The 'cluster__name' filter takes text without control characters."],
      ['/api/v1/clusters/?name__in=default,%00', "The 'name__in' filter takes text without control characters."],
      ['/api/v1/clusters/?region=%C2%85', "The 'region' filter takes text without control characters."],
    ])('when %s, then 400 names the filter and what it takes', async (path, error) => {
      const res = await get(path);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error });
    });

    it('when a UUID is written in any form Postgres reads, then it matches', async () => {
      const uuid = second.uuid as string;
      for (const spelling of [uuid, uuid.toUpperCase(), uuid.replace(/-/g, ''), `{${uuid}}`]) {
        const res = await get(`/api/v1/clusters/?uuid=${encodeURIComponent(spelling)}`);
        expect(res.body.objects).toEqual([second]);
      }
      expect((await get(`/api/v1/users/?cluster__uuid=${uuid}&limit=0`)).body.meta.total_count).toBe(5);
    });
  });

  describe('formats', () => {
    it('when format=xml, then tastypie XML with typed, sorted elements', async () => {
      const res = await get('/api/v1/clusters/?format=xml&name=default');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/xml; charset=utf-8');
      expect(res.text).toMatch(
        /^<\?xml version='1.0' encoding='utf-8'\?>\n<response><meta type="hash"><limit type="integer">20<\/limit><next type="null"\/><offset type="integer">0<\/offset><previous type="null"\/><total_count type="integer">1<\/total_count><\/meta><objects type="list"><object><auth_url>http:\/\/127.0.0.1:5000\/auth<\/auth_url><default_quota_bytes type="null"\/><default_quota_bytes_policy type="null"\/><default_quota_count type="null"\/><default_quota_count_policy type="null"\/><health>unknown<\/health><id type="integer">1<\/id><name>default<\/name><quota_bytes_policy_total type="null"\/><quota_bytes_total type="null"\/><quota_support type="null"\/><region>RegionOne<\/region><resource_uri>\/api\/v1\/clusters\/1\/<\/resource_uri><storage_url>http:\/\/127.0.0.1:8080\/v1<\/storage_url><uuid>[0-9a-f-]{36}<\/uuid><\/object><\/objects><\/response>$/,
      );
      await expect(parseStringPromise(res.text)).resolves.toBeTruthy();
    });

    it('when Accept asks for XML, then XML; when format=json overrides it, then JSON', async () => {
      const xml = await get('/api/v1/users/?limit=1').set('Accept', 'application/xml');
      expect(xml.text.startsWith("<?xml version='1.0' encoding='utf-8'?>\n<response>")).toBe(true);
      const json = await get('/api/v1/users/?limit=1&format=json').set('Accept', 'application/xml');
      expect(json.headers['content-type']).toBe('application/json');
    });

    it('when a detail is asked as XML, then the root is <object>', async () => {
      const res = await get('/api/v1/clusters/1/?format=xml');
      expect(res.text).toMatch(/^<\?xml version='1.0' encoding='utf-8'\?>\n<object><auth_url>/);
    });

    it('when an error is asked as XML, then it is <response><error>', async () => {
      const res = await get('/api/v1/users/?limit=x&format=xml');
      expect(res.status).toBe(400);
      expect(res.text).toBe(
        "<?xml version='1.0' encoding='utf-8'?>\n<response><error>Invalid limit 'x' provided. Please provide a positive integer.</error></response>",
      );
    });

    it('when the Accept header is malformed, then 400', async () => {
      const res = await get('/api/v1/users/').set('Accept', 'nonsense');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'Invalid Accept header' });
    });

    it('when format is unknown, then it falls through to JSON', async () => {
      const res = await get('/api/v1/users/?format=yaml&limit=1');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json');
    });
  });

  describe('methods and discovery', () => {
    it('when a method is not allowed, then 405 with Allow, even without a key', async () => {
      const res = await app.http().put('/api/v1/users/').send({});
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('GET,POST,PATCH');
      expect(res.body.error).toContain('GET,POST,PATCH');
      const detail = await app.http().post('/api/v1/users/1/');
      expect(detail.headers.allow).toBe('GET,PATCH,DELETE');
    });

    it('when OPTIONS, then 200 with the allowed methods', async () => {
      const res = await app.http().options('/api/v1/clusters/1/');
      expect(res.status).toBe(200);
      expect(res.headers.allow).toBe('GET,PATCH,DELETE');
    });

    it('when GET /api/v1/, then every resource with its list endpoint and schema', async () => {
      const res = await app.http().get('/api/v1/');
      expect(res.status).toBe(200);
      expect(res.body.users).toEqual({ list_endpoint: '/api/v1/users/', schema: '/api/v1/users/schema/' });
      expect(res.body.clusters).toEqual({ list_endpoint: '/api/v1/clusters/', schema: '/api/v1/clusters/schema/' });
      expect(res.body.version).toBe(CAIRN_VERSION);
    });

    it('when GET /healthz, then it reports the running version', async () => {
      expect((await app.http().get('/healthz')).body).toEqual({ status: 'ok', version: CAIRN_VERSION });
    });

    it('when GET a schema, then fields, filtering and ordering are described', async () => {
      const res = await get('/api/v1/users/schema/');
      expect(res.status).toBe(200);
      expect(res.body.allowed_list_http_methods).toEqual(['get', 'post', 'patch']);
      expect(res.body.default_limit).toBe(20);
      expect(res.body.fields.user).toMatchObject({ type: 'string', readonly: false, nullable: false });
      expect(res.body.fields.cluster).toMatchObject({ type: 'related', related_type: 'to_one' });
      expect(res.body.filtering.user).toContain('startswith');
      expect(res.body.ordering).toContain('user');
    });

    it('when GET /api/v1/openapi.json without a key, then the OpenAPI 3.1 document, listing every discoverable resource', async () => {
      const res = await app.http().get('/api/v1/openapi.json').set('Accept', 'application/xml');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body.openapi).toBe('3.1.0');
      const { version: _version, ...resources } = (await app.http().get('/api/v1/')).body as Record<string, unknown>;
      for (const [name, r] of Object.entries(resources as Record<string, { list_endpoint: string; schema: string }>)) {
        expect([name, Object.keys(res.body.paths[r.list_endpoint] ?? {})]).toEqual([
          name,
          expect.arrayContaining(['get', 'options']),
        ]);
        expect([name, Object.keys(res.body.paths[r.schema] ?? {})]).toEqual([name, expect.arrayContaining(['get'])]);
      }
      expect(res.body.paths['/api/v1/users/'].get.parameters.map((p: { name?: string }) => p.name)).toEqual(
        expect.arrayContaining([
          'user',
          'user__exact',
          'user__startswith',
          'id__in',
          'cluster',
          'cluster__name',
          'cluster__name__istartswith',
          'enabled',
        ]),
      );
      expect((await app.http().post('/api/v1/openapi.json')).headers.allow).toBe('GET');
    });

    it("when GET a schema, then each field has tastypie's primary_key and verbose_name", async () => {
      const res = await get('/api/v1/clusters/schema/');
      expect(res.body.fields.id).toMatchObject({ primary_key: true, verbose_name: 'id' });
      expect(res.body.fields.storage_url).toMatchObject({ primary_key: false, verbose_name: 'storage url' });
    });

    it('when a path is unknown, then 404 with a JSON error', async () => {
      const res = await get('/api/v1/nothing/');
      expect(res.status).toBe(404);
      expect(res.body.error).toMatch(/No resource/);
      expect((await get('/api/v1/nothing/schema/')).status).toBe(404);
      expect((await app.http().get('/elsewhere')).status).toBe(404);
    });
  });
});
