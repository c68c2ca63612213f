import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN_AUTH, startStack, type Stack } from '../support/stack';

/**
 * deploy/grafana/cairn.json: valid JSON in Grafana's dashboard shape, and every metric its panels
 * query is one that the two real services export once exercised (a renamed metric breaks this
 * test, not a dashboard in production).
 */
const dashboard = JSON.parse(readFileSync(join(__dirname, '..', '..', 'deploy', 'grafana', 'cairn.json'), 'utf8')) as {
  title: string;
  uid: string;
  schemaVersion: number;
  templating: { list: Array<{ name: string; type: string }> };
  panels: Array<{
    id: number;
    type: string;
    title: string;
    gridPos: Record<string, number>;
    datasource?: { uid: string };
    targets?: Array<{ refId: string; expr: string }>;
  }>;
};

const PROMQL_WORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
  'inf',
  'nan',
]);

/**
 * The metric names a PromQL expression selects: identifiers outside strings, label matchers, ranges and grouping
 * clauses, not calls.
 */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = [...bare.matchAll(/(?<![\w:.$])([a-zA-Z_:][\w:]*)(?![\w:]|\s*\()/g)].map((m) => m[1]!);
  return [...new Set(names.filter((n) => !PROMQL_WORDS.has(n.toLowerCase()) && !/^\d/.test(n)))];
}

/** What a scrape page declares: metric family → type, and the names of the samples it holds. */
function parsePage(page: string): { types: Map<string, string>; samples: Set<string> } {
  const types = new Map<string, string>();
  const samples = new Set<string>();
  for (const line of page.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    else if (line && !line.startsWith('#')) samples.add(/^[^{\s]+/.exec(line)![0]);
  }
  return { types, samples };
}

/**
 * Whether `name` is a series a scrape holds: a counter or gauge by its own name, a histogram
 * through its `_bucket`, `_sum` and `_count` (a summary through `_sum` and `_count`), never a
 * histogram's bare family name, and with at least one sample, so an empty family does not pass.
 */
function exported(name: string, page: { types: Map<string, string>; samples: Set<string> }): boolean {
  if (!page.samples.has(name)) return false;
  const family = /^(.*)_(bucket|sum|count)$/.exec(name);
  if (family && page.types.has(family[1]!)) {
    const type = page.types.get(family[1]!)!;
    return family[2] === 'bucket' ? type === 'histogram' : type === 'histogram' || type === 'summary';
  }
  const type = page.types.get(name);
  return type !== undefined && type !== 'histogram' && type !== 'summary';
}

describe('deploy/grafana/cairn.json', () => {
  const queries = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));

  it('when parsed, then it is a Grafana dashboard: title, uid, a data source variable, and panels with unique ids, positions and queries', () => {
    expect(dashboard.title).toBe('Cairn');
    expect(dashboard.uid).toMatch(/^[\w-]{1,40}$/);
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    expect(dashboard.templating.list.find((v) => v.name === 'datasource')?.type).toBe('datasource');
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of dashboard.panels) {
      expect(typeof p.title).toBe('string');
      expect(Object.keys(p.gridPos).sort()).toEqual(['h', 'w', 'x', 'y']);
      expect(p.gridPos.x! + p.gridPos.w!).toBeLessThanOrEqual(24);
      if (p.type === 'row') continue;
      expect(p.datasource?.uid).toBe('${datasource}');
      expect(p.targets!.length).toBeGreaterThan(0);
      for (const t of p.targets!) expect(t.expr.trim()).not.toBe('');
    }
    const titles = dashboard.panels.map((p) => p.title.toLowerCase()).join(' | ');
    for (const topic of [
      'request rate',
      '5xx',
      'latency',
      'logins',
      'token validations',
      'collector',
      'ring sets',
      'findings',
      'device fill',
      'replication',
    ])
      expect(titles).toContain(topic);
  });

  it('when an expression is read, then the metric names are the selected series, not functions, labels or keywords', () => {
    expect(
      metricNames(
        'histogram_quantile(0.99, sum by (service, le) (rate(http_request_duration_seconds_bucket{job=~"a|b", le!="x"}[$__rate_interval])))',
      ),
    ).toEqual(['http_request_duration_seconds_bucket']);
    expect(
      metricNames('time() - max by (cluster) (a_seconds{x="y"}) > 2 * 3600 or b_total offset 5m unless on(job) up'),
    ).toEqual(['a_seconds', 'b_total', 'up']);
  });

  describe('against both real services', () => {
    let stack: Stack;
    beforeAll(async () => {
      stack = await startStack({ database: 'postgres', redis: true });
    });
    afterAll(() => stack.close());

    it('when both services have been exercised, then every metric a panel queries is in their /metrics', async () => {
      const password = 'grafana-password-0123456789';
      await stack.createUser('grafana-alice', password);
      const login = (pass: string) =>
        fetch(`${stack.gatewayUrl}/auth/v3/auth/tokens`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({
            auth: {
              identity: {
                methods: ['password'],
                password: { user: { name: 'grafana-alice', domain: { id: 'default' }, password: pass } },
              },
            },
          }),
        });
      const ok = await login(password);
      expect(ok.status).toBe(201);
      const token = ok.headers.get('x-subject-token')!;
      expect((await login('wrong-password-0123456789')).status).toBe(401);
      expect(
        (
          await fetch(`${stack.gatewayUrl}/auth/v3/auth/tokens`, {
            headers: { 'X-Auth-Token': token, 'X-Subject-Token': token },
          })
        ).status,
      ).toBe(200);
      expect(
        (
          await fetch(`${stack.gatewayUrl}/auth/s3tokens`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: '{}',
          })
        ).status,
      ).toBeGreaterThanOrEqual(400);
      // The collectors' posts: a device report and a storage round.
      const api = (method: string, path: string, body: unknown) =>
        fetch(`${stack.apiUrl}${path}`, {
          method,
          headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        });
      const report = {
        policies: [{ index: 0, name: 'gold', default: true }],
        devices: [{ node: '10.0.0.1:6200', device: 'sdb1', policies: ['gold'], used_bytes: 1e12, avail_bytes: 3e12 }],
      };
      expect((await api('PUT', '/api/v1/clusters/1/devices/', report)).status).toBe(204);
      const samples = [
        { account: 'AUTH_grafana-alice', bytes_used: 1, object_count: 1, container_count: 1, policies: [] },
      ];
      expect(
        (
          await api('POST', '/api/v1/clusters/1/utilization/storage/', {
            interval: 3600,
            sampled_at: new Date().toISOString(),
            samples,
          })
        ).status,
      ).toBe(200);
      // A health round: one node with a device over its fill limit (an open finding) that
      // replicates, and a silent one.
      const now = Date.now() / 1000;
      const round = {
        collected_at: new Date().toISOString(),
        ring_md5: {},
        nodes: [
          {
            node: '10.0.0.1:6200',
            server_types: ['object'],
            answered: true,
            error: null,
            elapsed_ms: 5,
            recon: {
              diskusage: [{ device: 'sdb1', mounted: true, size: 1000, used: 970, avail: 30 }],
              'replication/object': { object_replication_last: now - 60, replication_last: now - 60 },
              time: now,
            },
          },
          {
            node: '10.0.0.2:6200',
            server_types: ['object'],
            answered: false,
            error: 'timeout',
            elapsed_ms: 5,
            recon: {},
          },
        ],
      };
      expect((await api('POST', '/api/v1/clusters/1/health/rounds/', round)).status).toBe(201);

      const pages = await Promise.all(
        [stack.apiUrl, stack.gatewayUrl].map(async (url) => (await fetch(`${url}/metrics`)).text()),
      );
      const both = pages.map(parsePage);
      const page = {
        types: new Map(both.flatMap((p) => [...p.types])),
        samples: new Set(both.flatMap((p) => [...p.samples])),
      };
      const names = queries.flatMap((q) => metricNames(q.expr).map((name) => ({ panel: q.panel, name })));
      expect(names.length).toBeGreaterThan(20);
      // `up` is Prometheus' own, for every target.
      expect(names.filter((n) => n.name !== 'up' && !exported(n.name, page))).toEqual([]);
    });
  });
});
