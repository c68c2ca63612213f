import { recordQuotaOutcomes } from '../../src/repositories/quotas';
import { ADMIN_AUTH, DB_KINDS, createUser, cheapHashPassword, startTestApp, type TestApp } from '../support/harness';

/**
 * Finding users by where their quotas stand: quota_status and quota_applied_at filter through the
 * users list's join of the reconciler's state, beside quota_bytes and quota_count, which filter and
 * order on the users' own columns. The states are written as the reconciler writes them.
 */
describe.each(DB_KINDS)('users filtered by quota on %s', (kind) => {
  let app: TestApp;
  const get = (query: string) =>
    app.http().get(`/api/v1/users/?user__startswith=f-&${query}`).set('Authorization', ADMIN_AUTH);
  const names = async (query: string): Promise<string[]> => {
    const res = await get(query);
    expect({ query, status: res.status }).toEqual({ query, status: 200 });
    // The total is counted under the same filters as the page.
    expect(res.body.meta.total_count).toBe(res.body.objects.length);
    return (res.body.objects as Array<{ user: string }>).map((o) => o.user);
  };
  let appliedAt: string;

  beforeAll(async () => {
    app = await startTestApp(kind, { hashPassword: cheapHashPassword });
    const applied = await createUser(app, 'f-applied', { quota_bytes: 300 });
    const failed = await createUser(app, 'f-error', { quota_bytes: 100, quota_count: 5 });
    await createUser(app, 'f-pending', { quota_bytes: 200 });
    await createUser(app, 'f-none');
    await recordQuotaOutcomes(app.db, [
      { userId: String(applied.id), version: '1', ok: true },
      {
        userId: String(failed.id),
        version: '1',
        ok: false,
        error: 'Swift is unreachable at http://127.0.0.1:9/v1: connect ECONNREFUSED; Cairn retries with backoff.',
        retryInMs: 60_000,
      },
    ]);
    appliedAt = (
      await app
        .http()
        .get(`/api/v1/users/${String(applied.id)}/`)
        .set('Authorization', ADMIN_AUTH)
    ).body.quota_applied_at as string;
  });
  afterAll(() => app.close());

  it('when users are filtered by quota_status, then each state, several, and never having had a quota select the right users', async () => {
    expect(await names('quota_status=error')).toEqual(['f-error']);
    expect(await names('quota_status=applied')).toEqual(['f-applied']);
    expect(await names('quota_status__exact=pending')).toEqual(['f-pending']);
    expect(await names('quota_status__in=pending,error&order_by=user')).toEqual(['f-error', 'f-pending']);
    expect(await names('quota_status__in=pending&quota_status__in=applied&order_by=user')).toEqual([
      'f-applied',
      'f-pending',
    ]);
    expect(await names('quota_status__isnull=true')).toEqual(['f-none']);
    expect(await names('quota_status__isnull=false&order_by=-quota_bytes')).toEqual([
      'f-applied',
      'f-pending',
      'f-error',
    ]);
  });

  it('when a status filter is combined with quota filters and ordering, then all of them apply, and paging keeps the total', async () => {
    expect(await names('quota_status__in=applied,pending,error&quota_bytes__gte=200&order_by=quota_bytes')).toEqual([
      'f-pending',
      'f-applied',
    ]);
    expect(await names('quota_bytes__isnull=true')).toEqual(['f-none']);
    expect(await names('quota_count__isnull=false&quota_status=error')).toEqual(['f-error']);
    const page = await get('quota_status__isnull=false&order_by=quota_bytes&limit=1&offset=1');
    expect(page.body.meta.total_count).toBe(3);
    expect(page.body.objects.map((o: { user: string }) => o.user)).toEqual(['f-pending']);
  });

  it('when users are filtered by quota_applied_at, then only those Swift accepted in that time match', async () => {
    expect(await names(`quota_applied_at__gte=${encodeURIComponent(appliedAt)}`)).toEqual(['f-applied']);
    expect(await names(`quota_applied_at__lt=${encodeURIComponent(appliedAt)}`)).toEqual([]);
    expect(await names('quota_applied_at__isnull=true&order_by=user')).toEqual(['f-error', 'f-none', 'f-pending']);
  });

  it('when a quota filter value is wrong, then 400 with a sentence that says what it takes', async () => {
    const refused: Array<[string, string]> = [
      ['quota_status=broken', "The 'quota_status' filter takes one of 'applied', 'pending', 'error'."],
      [
        'quota_status__in=error,Applied',
        "The 'quota_status__in' filter takes values among 'applied', 'pending', 'error', separated by commas.",
      ],
      ['quota_status__startswith=app', "'startswith' is not an allowed filter on the 'quota_status' field."],
      ['quota_status__isnull=maybe', 'Invalid resource lookup data provided (mismatched type).'],
      ['order_by=quota_status', "The 'quota_status' field does not allow ordering."],
      ['quota_error=x', "The 'quota_error' field does not allow filtering."],
      ['quota_bytes__gte=ten', 'Invalid resource lookup data provided (mismatched type).'],
      ['quota_bytes__gte=9223372036854775808', 'Invalid resource lookup data provided (mismatched type).'],
      ['quota_applied_at__gt=yesterday', 'Invalid resource lookup data provided (mismatched type).'],
    ];
    for (const [query, error] of refused) {
      const res = await get(query);
      expect({ query, status: res.status, error: res.body.error }).toEqual({ query, status: 400, error });
    }
  });

  it('when a list of another resource chains into the user, then the quota state is not reachable that way (400, not a failure)', async () => {
    const res = await app
      .http()
      .get('/api/v1/s3_credentials/?user__quota_status=error')
      .set('Authorization', ADMIN_AUTH);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("'quota_status' is not an allowed filter on the 'user' field.");
  });

  it('when /schema/ and the OpenAPI document are read, then they show the quota filters and the states a status takes', async () => {
    const schema = (await app.http().get('/api/v1/users/schema/').set('Authorization', ADMIN_AUTH)).body;
    expect(schema.filtering.quota_status).toEqual(['exact', 'in', 'isnull']);
    expect(schema.filtering.quota_applied_at).toEqual(['gt', 'gte', 'lt', 'lte', 'isnull']);
    expect(schema.filtering.quota_bytes).toEqual(['exact', 'in', 'gt', 'gte', 'lt', 'lte', 'isnull']);
    expect(schema.ordering).toEqual(expect.arrayContaining(['quota_bytes', 'quota_count']));
    expect(schema.ordering).not.toContain('quota_status');
    const doc = (await app.http().get('/api/v1/openapi.json')).body;
    const parameters = doc.paths['/api/v1/users/'].get.parameters as Array<{
      name: string;
      schema: { enum?: string[] };
    }>;
    expect(parameters.find((p) => p.name === 'quota_status')!.schema.enum).toEqual(['applied', 'pending', 'error']);
    expect(parameters.map((p) => p.name)).toEqual(
      expect.arrayContaining([
        'quota_status__in',
        'quota_status__isnull',
        'quota_applied_at__gte',
        'quota_bytes__isnull',
      ]),
    );
    expect(doc.components.schemas.users.properties.quota_status.enum).toEqual(['applied', 'pending', 'error', null]);
  });
});
