import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { ADMIN_AUTH, ADMIN_AUTH_NAME, ADMIN_KEY, startStack, type Stack } from '../support/stack';
import { formatBytes, formatPct, formatTb, tbTitle } from '../../packages/console/src/lib/format';
import {
  describeProjection,
  historySamples,
  projectThreshold,
  reachAt,
  trend,
} from '../../packages/console/src/lib/projection';
import { planCapacity } from '../../packages/console/src/lib/ring-plan';
import type { RingPlan } from '../../packages/console/src/api';
import { ringSetMatcher } from '../../packages/console/src/lib/ring-sets';
import {
  DEFAULT_STEP_PCT,
  describeWhen,
  formatDuration,
  measuredRate,
  passesOf,
  projectChange,
  thresholdBeforeAfter,
  zoneFill,
  zoneLabel,
  zonesOfRings,
} from '../../packages/console/src/lib/what-if';
import { ringBytes } from '../../packages/cli/test/helpers/ring-file';
import { RING, healthyNode } from '../../services/management-api/test/support/health-rounds';
import { launch, PageProblems, type Browser } from './chromium';
import { axeFindings } from './console-page';

/**
 * The operators' console in Debian's headless chromium, served by the management API on a real
 * Postgres: every page, the user life cycle, the capacity figures against the API's, what a reader
 * sees, keyboard-only use and an axe-core scan. Screenshots go to browser/artifacts/.
 * Functions given to page.evaluate run in the page: this directory is type-checked with the DOM
 * library (its own tsconfig.json).
 */
const CONSOLE_DIR = join(__dirname, '..', '..', 'packages', 'console', 'dist');
/**
 * A ring plan computed by Swift's ring builder (@cairn/rings' makePlan, Swift 2.30.1): the six
 * devices of test-e2e/interop/swift-ring.ts's buildRing, two added in zones 1 and 2
 * (`--add r1z1-10.0.0.7:6200/sdb:100 --add r1z2-10.0.0.8:6200/sdb:100 --seed 7`), each existing device
 * 4 TB with 2.4 TB to 3.4 TB used as if from recon.
 */
const RING_PLAN = JSON.parse(readFileSync(join(__dirname, 'fixtures', 'ring-plan.json'), 'utf8')) as {
  computed_at: string;
  bytes_to_move: number;
  devices: Array<{
    ip: string;
    port: number;
    device: string;
    parts: number;
    parts_after: number;
    used_bytes: number | null;
    size_bytes: number | null;
    projected_used_pct: number | null;
  }>;
  steps: Array<{ parts_moved: number }>;
};
const ARTIFACTS = join(__dirname, 'artifacts');
const WRITE_CONTROLS =
  /^(New cluster|New user|New operator|New S3 credential|Edit|Disable|Enable|Delete|Make superuser|Remove superuser|Change password|Add key|Revoke)$/;

/**
 * A device report across three ring sets, some devices past 80 %, one unmounted, and one device
 * that lists its policies out of policy-index order (silver before gold) yet belongs to gold,silver.
 */
function deviceReport() {
  const devices: Array<Record<string, unknown>> = [];
  const sets: Array<[string[], number]> = [
    [['gold'], 24],
    [['gold', 'silver'], 16],
    [['silver'], 8],
  ];
  let n = 0;
  for (const [policies, count] of sets) {
    for (let i = 0; i < count; i += 1) {
      n += 1;
      const raw = (4 + (n % 3) * 2) * 1e12;
      // Deterministic spread of fill levels, 12 % to 93 %; the silver-only set is fuller (77 % to 95 %).
      const pct = policies.length === 1 && policies[0] === 'silver' ? 77 + ((n * 7) % 19) : 12 + ((n * 37) % 82);
      const used = Math.round((raw * pct) / 100);
      const listed = policies.length === 2 && i === 0 ? [...policies].reverse() : policies;
      devices.push({
        node: `10.0.${Math.ceil(n / 8)}.${n % 8}:6200`,
        device: `sd${String.fromCharCode(97 + (n % 20))}${n}`,
        policies: listed,
        used_bytes: used,
        avail_bytes: raw - used,
      });
    }
  }
  devices.push({ node: '10.0.9.9:6200', device: 'sdz1', policies: ['gold'], mounted: false });
  return {
    policies: [
      { index: 0, name: 'gold', default: true },
      { index: 1, name: 'silver' },
    ],
    devices,
  };
}

describe('the console in chromium', () => {
  let stack: Stack;
  let browser: Browser;
  let readerKey: string;
  let aliceId: string;

  const api = async <T>(method: string, path: string, body?: unknown, auth = ADMIN_AUTH): Promise<T> => {
    const res = await fetch(`${stack.apiUrl}/api/v1/${path}`, {
      method,
      headers: { Authorization: auth, 'Content-Type': 'application/json', Accept: 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (res.status === 204 ? undefined : await res.json()) as T;
  };

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    // An S3 secret key, so the audit test can create (and audit) an S3 credential.
    stack = await startStack({
      database: 'postgres',
      consoleDir: CONSOLE_DIR,
      s3SecretKeys: `console:${randomBytes(32).toString('base64')}`,
    });
    await api('PUT', 'clusters/1/devices/', deviceReport());
    await seedCapacityHistory();
    await api('POST', 'clusters/', {
      name: 'east',
      auth_url: 'https://auth-east.example.com/auth',
      storage_url: 'https://swift-east.example.com/v1',
    });
    aliceId = (await stack.createUser('alice', 'a-long-password-for-alice')).id;
    await stack.createUser('bob', 'a-long-password-for-bob-x', { is_superuser: true });
    const reader = await api<{ api_key: string }>('POST', 'operators/', {
      name: 'watcher',
      role: 'reader',
      clusters: [],
    });
    readerKey = reader.api_key;
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  /** 20 days of daily samples before the report, each ring set growing 1 % of today's use a day. */
  async function seedCapacityHistory(): Promise<void> {
    const { capacity } = await api<{
      capacity: Array<{ ring_set: string; total_raw_tb: number; total_used_tb: number }>;
    }>('GET', 'clusters/1/capacity/list/');
    const hourNow = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    const rows = capacity.flatMap((e) =>
      Array.from({ length: 20 }, (_, i) => {
        const days = 20 - i;
        const used = e.total_used_tb * (1 - 0.01 * days);
        const hour = new Date(hourNow - days * 86_400_000);
        return {
          cluster_id: 1,
          ring_set: e.ring_set,
          hour,
          total_raw_tb: e.total_raw_tb,
          total_used_tb: used,
          total_free_tb: e.total_raw_tb - used,
          total_used_pct: (used / e.total_raw_tb) * 100,
          reported_at: hour,
        };
      }),
    );
    await stack.db('capacity_history').insert(rows);
  }

  /** A new page, signed out: the session cookie is shared by the whole browser, so it is dropped first. */
  async function openPage(): Promise<{ page: Page; problems: PageProblems }> {
    await browser.context.clearCookies();
    const page = await browser.context.newPage();
    page.setDefaultTimeout(30000);
    return { page, problems: new PageProblems(page) };
  }

  async function signIn(page: Page, name: string, key: string): Promise<void> {
    await page.goto(`${stack.apiUrl}/console/`);
    await page.getByLabel('Operator name').fill(name);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
  }

  /** Goes to a console route and waits until its heading is shown and nothing is loading. */
  async function visit(page: Page, hash: string, heading: RegExp): Promise<void> {
    await page.evaluate((h) => {
      location.hash = h;
    }, hash);
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
    await page.waitForFunction(() => document.querySelectorAll('.loading, [aria-busy="true"]').length === 0);
  }

  async function screenshots(page: Page, name: string): Promise<void> {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.screenshot({ path: join(ARTIFACTS, `${name}-1280x800.png`) });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: join(ARTIFACTS, `${name}-390x844.png`) });
    // At phone width nothing may stick out sideways (wide tables scroll inside their own box).
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1280, height: 800 });
  }

  const writeControls = (page: Page) =>
    page.evaluate(
      (pattern) =>
        [...document.querySelectorAll('main button, main a.button')]
          .map((b) => b.textContent?.trim() ?? '')
          .filter((t) => new RegExp(pattern).test(t)),
      WRITE_CONTROLS.source,
    );

  it('when the key is wrong, then sign-in says so next to the form and keeps nothing (nor offers the key to a password store)', async () => {
    const { page } = await openPage();
    await page.goto(`${stack.apiUrl}/console/`);
    // The key is typed hidden and not offered to the browser's password store.
    await expect(
      page.getByLabel('API key').evaluate((i: HTMLInputElement) => ({ type: i.type, autocomplete: i.autocomplete })),
    ).resolves.toEqual({
      type: 'password',
      autocomplete: 'off',
    });
    await page.getByLabel('Operator name').fill(ADMIN_AUTH_NAME);
    await page.getByLabel('API key').fill('not-the-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.locator('form [role="alert"]').textContent()).resolves.toMatch(
      /Invalid operator name or API key/,
    );
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.close();
  });

  it('when the console first loads, then the JavaScript it fetches is at most 200 KB gzipped', async () => {
    const { page, problems } = await openPage();
    const scripts: Array<Promise<{ url: string; raw: number; gzip: number }>> = [];
    page.on('response', (r) => {
      if (r.request().resourceType() === 'script')
        scripts.push(r.body().then((b) => ({ url: r.url(), raw: b.length, gzip: gzipSync(b, { level: 9 }).length })));
    });
    await page.goto(`${stack.apiUrl}/console/`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    const loaded = await Promise.all(scripts);
    expect(loaded.length).toBeGreaterThan(0);
    const gzip = loaded.reduce((a, s) => a + s.gzip, 0);
    const raw = loaded.reduce((a, s) => a + s.raw, 0);
    process.stdout.write(
      `console initial JavaScript: ${loaded.length} file(s), ${raw} bytes, ${gzip} bytes gzipped (level 9)\n`,
    );
    expect(gzip).toBeLessThanOrEqual(200 * 1024);
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it('when an admin signs in, then every page loads with no console errors, no failed requests and no serious axe findings', async () => {
    const { page, problems } = await openPage();
    // Read apart from the browser: a second navigation would abort the first one's requests.
    const document = await fetch(`${stack.apiUrl}/console/`);
    expect(document.headers.get('content-security-policy')).toMatch(/script-src 'self'/);
    await signIn(page, ADMIN_AUTH_NAME, ADMIN_KEY);
    const pages: Array<[string, string, RegExp]> = [
      ['clusters', '#/clusters', /^Clusters$/],
      ['capacity', '#/clusters/1/capacity', /^Capacity planning — default$/],
      ['users', '#/users', /^Users$/],
      ['user', `#/users/${aliceId}`, /^User alice$/],
      ['operators', '#/operators', /^Operators$/],
      ['audit', '#/audit', /^Audit trail$/],
    ];
    for (const [name, hash, heading] of pages) {
      await visit(page, hash, heading);
      expect({ page: name, problems: problems.take() }).toEqual({ page: name, problems: [] });
      expect({ page: name, axe: await axeFindings(page) }).toEqual({ page: name, axe: [] });
      await screenshots(page, name);
    }
    await visit(page, '#/clusters/1/capacity', /^Capacity planning/);
    await page.screenshot({ path: join(ARTIFACTS, 'capacity-full-1280.png'), fullPage: true });
    // The key went only into headers: no request URL carries it.
    expect(problems.urls.filter((u) => u.includes(ADMIN_KEY))).toEqual([]);
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it("when the cluster has capacity history, then the page draws each ring set's trend and the estimate the API's samples give", async () => {
    const { page, problems } = await openPage();
    await signIn(page, ADMIN_AUTH_NAME, ADMIN_KEY);
    await visit(page, '#/clusters/1/capacity', /^Capacity planning/);
    const start = new Date(Date.now() - 30 * 86_400_000).toISOString();
    const { history } = await api<{
      history: Array<{
        ring_set: string;
        samples: Array<{ time: string; total_used_tb: number; total_raw_tb: number }>;
      }>;
    }>('GET', `clusters/1/capacity/history/?start=${start}`);
    expect(history.map((h) => h.ring_set)).toEqual(['gold', 'gold,silver', 'silver']);
    for (const h of history) {
      expect(h.samples).toHaveLength(21);
      const trend = page.locator(`.trend[data-ring-set="${h.ring_set}"]`);
      await trend.locator('canvas').first().waitFor();
      await expect(
        trend.getByRole('img', { name: new RegExp(`^Ring set ${h.ring_set}: bytes used`) }).count(),
      ).resolves.toBe(1);
      const expected = describeProjection(projectThreshold(historySamples(h.samples)));
      await expect(trend.locator('.estimate').textContent()).resolves.toBe(expected);
      // The chart's label promises its figures in a table below: one row per sample, the API's numbers.
      await expect(trend.getByRole('img').first().getAttribute('aria-label')).resolves.toMatch(/table below/);
      const rows = await trend
        .locator('table.trend-samples tbody tr')
        .evaluateAll((trs) =>
          trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.getAttribute('title') ?? td.textContent)),
        );
      expect(rows).toHaveLength(h.samples.length);
      expect(rows.map((r) => [r[0], r[1], r[2]])).toEqual(
        h.samples.map((x) => [
          x.time.slice(0, 16).replace('T', ' '),
          tbTitle(x.total_used_tb),
          tbTitle(x.total_raw_tb),
        ]),
      );
      expect(expected).toMatch(/^(Estimate: |Already )/);
    }
    // The README's picture of the page: the table, the ring sets and the first trend.
    await page.screenshot({
      path: join(ARTIFACTS, 'capacity-trend-1280.png'),
      fullPage: true,
      clip: { x: 0, y: 0, width: 1280, height: 1150 },
    });
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it("when the operator adds 2 devices of 16 TB in the what-if panel, then it shows what the what-if module computes from the API's devices and history; when a stored plan is chosen, then Swift's exact figures beside it", async () => {
    // A plan Swift's ring builder computed (see RING_PLAN), stored as `cairn rings plan --cluster` does.
    const stored = await api<{ id: string }>('POST', 'clusters/1/ring_plans/', { name: 'grow-z1-z2', plan: RING_PLAN });
    const { page, problems } = await openPage();
    await signIn(page, ADMIN_AUTH_NAME, ADMIN_KEY);
    await visit(page, '#/clusters/1/capacity', /^Capacity planning/);
    const panel = page.locator('section', { has: page.getByRole('heading', { name: 'What if' }) });
    await panel.getByLabel('Ring set').selectOption('gold,silver');
    await panel.getByLabel('Devices to add').fill('2');
    await panel.getByLabel('Size of each').fill('16 TB');

    // The same figures from the API's answers, through the console's own module.
    const ringSet = 'gold,silver';
    const { capacity } = await api<{ capacity: Array<{ ring_set: string }> }>('GET', 'clusters/1/capacity/list/');
    const ringSetOf = ringSetMatcher(capacity.map((e) => e.ring_set));
    const { objects } = await api<{
      objects: Array<{
        node: string;
        device: string;
        policies: string[];
        used_bytes: number | null;
        avail_bytes: number | null;
      }>;
    }>('GET', 'clusters/1/devices/?limit=1000');
    const membersIn = (zones: Map<string, { region: number; zone: number }>) =>
      objects
        .filter((d) => ringSetOf(d.policies) === ringSet && d.used_bytes !== null && d.avail_bytes !== null)
        .map((d) => ({
          key: `${d.node}/${d.device}`,
          node: d.node,
          device: d.device,
          weight: d.used_bytes! + d.avail_bytes!,
          used: d.used_bytes!,
          zone: zones.get(`${d.node}/${d.device}`) ?? null,
        }));
    const members = membersIn(new Map());
    expect(members).toHaveLength(16);
    // No ring stored and no health round yet: no zone to target, and the rate is the typed assumption.
    const w = projectChange(
      members,
      { kind: 'add', count: 2, sizeBytes: 16e12, nodes: 1, zone: null },
      {
        partPower: 10,
        replicas: 3,
        stepPct: DEFAULT_STEP_PCT,
        rate: { kind: 'assumed', bytesPerSecondPerNode: 100 * 2 ** 20 },
      },
    );
    const start = new Date(Date.now() - 30 * 86_400_000).toISOString();
    const { history } = await api<{
      history: Array<{
        ring_set: string;
        samples: Array<{ time: string; total_used_tb: number; total_raw_tb: number }>;
      }>;
    }>('GET', `clusters/1/capacity/history/?start=${start}`);
    const samples = historySamples(history.find((h) => h.ring_set === ringSet)!.samples);
    const warn = thresholdBeforeAfter(samples, w.rawAfter - w.rawBefore, 80);
    const full = thresholdBeforeAfter(samples, w.rawAfter - w.rawBefore, 100);

    const field = async (name: string) => (await panel.locator(`[data-field="${name}"]`).textContent())?.trim();
    await expect(field('estimate-note')).resolves.toBe(
      'Estimated: proportional to weight; a ring plan computed by Swift (cairn rings plan --cluster, below) gives exact figures.',
    );
    await expect(field('raw')).resolves.toBe(`${formatBytes(w.rawBefore)} → ${formatBytes(w.rawAfter)}`);
    await expect(field('parts')).resolves.toBe(
      `${w.partsToMove.toLocaleString('en-US')} of ${w.partReplicas.toLocaleString('en-US')} partition replicas`,
    );
    await expect(field('bytes')).resolves.toBe(formatBytes(w.bytesToMove));
    await expect(field('steps')).resolves.toBe(String(w.steps));
    await expect(field('time')).resolves.toMatch(
      new RegExp(`^${formatDuration(w.seconds)} at the assumed rate, 1 node `),
    );
    await panel.locator('[data-field="rate"]', { hasText: 'assumed' }).waitFor();
    await expect(field('rate')).resolves.toMatch(
      /^Replication rate: assumed, as typed above — no storage node reports/,
    );
    await expect(panel.getByLabel('In zone').locator('option').allTextContents()).resolves.toEqual(['Any zone']);
    // No ring stored: the typed part power and replicas stand in, and the panel says so.
    await panel.locator('[data-field="geometry"]', { hasText: 'as typed' }).waitFor();
    await expect(field('geometry')).resolves.toMatch(
      /^Part power and replicas: as typed above — no stored object ring of this cluster lists the devices of this ring set/,
    );
    await expect(field('warn-when')).resolves.toBe(
      `today ${describeWhen(warn.before)} · after ${describeWhen(warn.after)}`,
    );
    await expect(field('full-when')).resolves.toBe(
      `today ${describeWhen(full.before)} · after ${describeWhen(full.after)}`,
    );
    // Growth seeded at 1 % a day reaches full later with 32 TB more.
    expect([full.before.kind, full.after.kind]).toEqual(['at', 'at']);
    const rows = await panel
      .locator('table.what-if-devices tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [
          tr.getAttribute('data-device'),
          tr.querySelector('[data-field="pct"]')?.textContent,
          tr.querySelector('[data-field="pct-after"]')?.textContent,
        ]),
      );
    expect(rows).toHaveLength(18);
    const byKey = new Map(w.devices.map((d) => [d.key, d]));
    for (const [key, today, after] of rows) {
      const d = byKey.get(key!)!;
      expect([key, today, after]).toEqual([key, d.isNew ? 'new' : formatPct(d.pct), formatPct(d.pctAfter)]);
      if (!d.isNew) expect(d.pctAfter!).toBeLessThan(d.pct!);
    }

    // The stored plan: every figure is the plan's own, marked as Swift's; the estimate stays marked as one.
    await panel.getByLabel('Plan computed by Swift').selectOption(stored.id);
    const computed = panel.locator(`[data-plan="${stored.id}"]`);
    await expect(field('plan-note')).resolves.toMatch(
      /^Computed by Swift 2\.30\.1 with seed 7 at .+ for ring object: exact figures from Swift's ring builder\.$/,
    );
    await expect(computed.locator('time').getAttribute('datetime')).resolves.toBe(RING_PLAN.computed_at);
    await expect(field('plan-parts')).resolves.toBe('768 of 1,024 partitions (75.0 %), 768 partition replicas');
    await expect(field('plan-bytes')).resolves.toBe(formatBytes(RING_PLAN.bytes_to_move));
    await expect(field('plan-steps')).resolves.toBe('1 computed by Swift so far; about 34 in all (estimated)');
    await expect(field('plan-time')).resolves.toMatch(/ at the assumed rate, 2 receiving nodes at once /);
    await expect(field('estimate-note')).resolves.toMatch(/^Estimated: /);
    // Time to full from the plan's own fills (24 TB → 32 TB, every size known) at the chosen ring set's growth.
    const storedPlan = await api<RingPlan>('GET', `clusters/1/ring_plans/${stored.id}/`);
    const cap = planCapacity(storedPlan);
    if (typeof cap === 'string') throw new Error(cap);
    expect([cap.rawBefore, cap.rawAfter, cap.sizedFromWeight]).toEqual([24e12, 32e12, 0]);
    const perDay = trend(samples)!.slope * 86_400_000;
    const planAt = Date.parse(RING_PLAN.computed_at);
    const planFull = [
      reachAt(cap.usedBefore, cap.rawBefore, planAt, perDay, 100),
      reachAt(cap.usedAfter, cap.rawAfter, planAt, perDay, 100),
    ];
    expect(planFull.map((p) => p.kind)).toEqual(['at', 'at']);
    await expect(field('plan-fill')).resolves.toBe(
      `${formatPct((100 * cap.usedBefore) / cap.rawBefore)} of ${formatBytes(24e12)} → ${formatPct((100 * cap.usedAfter) / cap.rawAfter)} of ${formatBytes(32e12)} (the plan's)`,
    );
    await expect(field('plan-full-when')).resolves.toBe(
      `before ${describeWhen(planFull[0]!)} · after ${describeWhen(planFull[1]!)}`,
    );
    await expect(field('plan-growth')).resolves.toMatch(
      /the growth of ring set gold,silver \(the one chosen above: none of the plan's devices reports to this page\)/,
    );
    const planRows = await computed
      .locator('table.what-if-plan-devices tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [
          tr.getAttribute('data-device'),
          tr.querySelector('[data-field="pct"]')?.textContent,
          tr.querySelector('[data-field="pct-after"]')?.textContent,
          tr.querySelector('[data-field="parts"]')?.textContent,
        ]),
      );
    expect(planRows).toHaveLength(RING_PLAN.devices.length);
    expect(new Map(planRows.map((r) => [r[0], r.slice(1)]))).toEqual(
      new Map(
        RING_PLAN.devices.map((d) => [
          `${d.ip}:${d.port}/${d.device}`,
          [
            d.parts === 0 ? 'new' : formatPct((100 * d.used_bytes!) / d.size_bytes!),
            formatPct(d.projected_used_pct),
            `${d.parts} → ${d.parts_after}`,
          ],
        ]),
      ),
    );
    await expect(
      computed.locator('table.what-if-steps tbody tr [data-field="step-parts"]').allTextContents(),
    ).resolves.toEqual(RING_PLAN.steps.map((st) => String(st.parts_moved)));

    // The cluster's object ring is stored (its devices in zones r1z1 to r1z3) and a health round
    // reports two nodes' last object replication passes: the panel targets a zone and uses the
    // measured rate.
    const ringDevices = objects
      .filter((d) => d.policies.includes('gold'))
      .map((d, i) => ({
        ip: d.node.split(':')[0]!,
        port: Number(d.node.split(':')[1]),
        device: d.device,
        zone: 1 + (i % 3),
      }));
    const pushed = await fetch(`${stack.apiUrl}/api/v1/clusters/1/rings/object/`, {
      method: 'POST',
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/octet-stream' },
      body: new Uint8Array(ringBytes(ringDevices, 6)),
    });
    expect(pushed.status).toBe(201);
    const roundAt = new Date();
    const passEnd = Math.floor(roundAt.getTime() / 1000) - 1800;
    const pass = (minutes: number, attempted: number, ago: number) => ({
      'replication/object': {
        replication_time: minutes,
        replication_stats: { attempted, success: attempted, failure: 0 },
        replication_last: passEnd - ago,
        object_replication_time: minutes,
        object_replication_last: passEnd - ago,
      },
    });
    await api('POST', 'clusters/1/health/rounds/', {
      collected_at: roundAt.toISOString(),
      ring_md5: RING,
      nodes: [
        healthyNode('10.0.1.1:6200', roundAt, pass(2, 1536, 600)),
        healthyNode('10.0.1.2:6200', roundAt, pass(6, 1536, 0)),
      ],
    });
    await page.reload();
    await page.getByRole('heading', { level: 1, name: /^Capacity planning/ }).waitFor();
    await panel.getByLabel('Ring set').selectOption('gold,silver');
    await panel.getByLabel('Devices to add').fill('2');
    await panel.getByLabel('Size of each').fill('16 TB');
    await panel.getByLabel('In zone').selectOption('r1z2');
    await panel.locator('[data-field="rate"]', { hasText: 'measured' }).waitFor();

    const rings = await api<{ objects: Parameters<typeof zonesOfRings>[0] }>('GET', 'clusters/1/rings/?current=true');
    const health = await api<{ nodes: Parameters<typeof passesOf>[0] }>('GET', 'clusters/1/health/');
    const rate = measuredRate(passesOf(health.nodes))!;
    // 3072 partitions in 8 minutes; the longer pass took 6.
    expect([rate.partitionsPerSecondPerNode, rate.passes, rate.longestPassSeconds]).toEqual([6.4, 2, 360]);
    const zoned = membersIn(zonesOfRings(rings.objects));
    // The stored ring's part power (6) and replicas (3), not the typed 10.
    const wz = projectChange(
      zoned,
      { kind: 'add', count: 2, sizeBytes: 16e12, nodes: 1, zone: { region: 1, zone: 2 } },
      { partPower: 6, replicas: 3, stepPct: DEFAULT_STEP_PCT, rate: { kind: 'measured', ...rate } },
    );
    await panel.locator('[data-field="geometry"]', { hasText: 'stored ring' }).waitFor();
    await expect(field('geometry')).resolves.toBe(
      "Part power 6 and 3 replicas: the cluster's stored ring object, version 1.",
    );
    expect(await panel.getByLabel('Part power').count()).toBe(0);
    await expect(field('parts')).resolves.toBe(
      `${wz.partsToMove.toLocaleString('en-US')} of ${(192).toLocaleString('en-US')} partition replicas`,
    );
    await expect(field('steps')).resolves.toBe(String(wz.steps));
    await expect(field('rate')).resolves.toMatch(
      /^Replication rate: measured, 6\.4 partitions a second per node — the last completed object replication pass of 2 nodes \(recon\), the latest ended .+, the earliest .+; the longest took 6 min\.$/,
    );
    await expect(panel.locator('[data-field="rate"] time').first().getAttribute('datetime')).resolves.toBe(
      new Date(passEnd * 1000).toISOString(),
    );
    expect(await panel.getByLabel('Replication rate per node, MiB/s (assumed)').count()).toBe(0);
    await expect(field('time')).resolves.toMatch(
      new RegExp(
        `^${formatDuration(wz.seconds)} at the measured rate, 1 node moving data at once, and a replication pass at least per step `,
      ),
    );
    await expect(field('zone-note')).resolves.toMatch(/^Added to r1z2: an estimate\. /);
    const zoneRows = await panel
      .locator('table.what-if-zones tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) =>
          ['devices', 'pct', 'pct-after', 'replicas'].reduce(
            (row, f) => [...row, tr.querySelector(`[data-field="${f}"]`)?.textContent ?? ''],
            [tr.getAttribute('data-zone') ?? ''],
          ),
        ),
      );
    expect(zoneRows).toEqual(
      zoneFill(wz, 3).map((z) => [
        zoneLabel(z.zone),
        `${z.devices - z.newDevices}${z.newDevices > 0 ? ` + ${z.newDevices} new` : ''}`,
        formatPct(z.pct),
        formatPct(z.pctAfter),
        `${z.replicasWanted.toFixed(2)} → ${z.replicasWantedAfter.toFixed(2)}`,
      ]),
    );
    expect(zoneRows.find((r) => r[0] === 'r1z2')?.[1]).toMatch(/ \+ 2 new$/);
    await expect(
      panel.locator('table.what-if-devices tbody tr[data-device^="new-"] [data-field="zone"]').allTextContents(),
    ).resolves.toEqual(['r1z2', 'r1z2']);
    await panel.getByLabel('Plan computed by Swift').selectOption(stored.id);
    await expect(field('plan-time')).resolves.toMatch(/ at the measured rate, 2 receiving nodes at once /);
    await panel.screenshot({ path: join(ARTIFACTS, 'capacity-what-if-1280.png') });
    expect(await axeFindings(page)).toEqual([]);
    // On a phone the device column and both fills stay in view; the page does not scroll sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    for (const selector of ['th[scope="row"]', 'td[data-field="pct"]', 'td[data-field="pct-after"]']) {
      const r = await panel.locator(`table.what-if-devices tbody tr ${selector}`).first().boundingBox();
      expect({ selector, inView: !!r && r.x >= 0 && r.x + r.width <= 390 }).toEqual({ selector, inView: true });
    }
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await panel.screenshot({ path: join(ARTIFACTS, 'capacity-what-if-390.png') });
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it('when a ring set has a single capacity sample, then a sentence gives it instead of a chart, and the table shows that sample', async () => {
    const solo = await api<{ id: number }>('POST', 'clusters/', {
      name: 'solo',
      auth_url: 'https://auth-solo.example.com/auth',
      storage_url: 'https://swift-solo.example.com/v1',
    });
    const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3 * 3_600_000);
    await stack.db('capacity_history').insert({
      cluster_id: solo.id,
      ring_set: 'gold',
      hour,
      total_raw_tb: 10,
      total_used_tb: 4,
      total_free_tb: 6,
      total_used_pct: 40,
      reported_at: hour,
    });
    const { page, problems } = await openPage();
    await signIn(page, ADMIN_AUTH_NAME, ADMIN_KEY);
    await visit(page, `#/clusters/${solo.id}/capacity`, /^Capacity planning — solo$/);
    // One sample draws no line: a sentence gives it, in the table's time and the page's unit.
    const note = page.locator('.trend[data-ring-set="gold"] .chart-note');
    await note.waitFor();
    await expect(note.textContent()).resolves.toBe(
      `One sample so far, at ${hour.toISOString().slice(0, 16).replace('T', ' ')} UTC: used ${formatTb(4)}, 80 % of raw ${formatTb(8)}. A chart needs at least two.`,
    );
    expect(await page.locator('.trend[data-ring-set="gold"] canvas').count()).toBe(0);
    const rows = await page.locator('.trend[data-ring-set="gold"] table.trend-samples tbody tr').allTextContents();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain(hour.toISOString().slice(0, 16).replace('T', ' '));
    await page.screenshot({ path: join(ARTIFACTS, 'capacity-single-sample-1280.png'), fullPage: true });
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it('when pages are visited, then each has its own document title, the sign-in page too', async () => {
    const { page, problems } = await openPage();
    await page.goto(`${stack.apiUrl}/console/`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    // The title is set by an effect, which React runs after the form is painted: wait for it, as
    // below for the other pages (a page that never sets it times out here).
    await page.waitForFunction(() => document.title.startsWith('Sign in'));
    expect(await page.title()).toBe('Sign in · Cairn console');
    await signIn(page, ADMIN_AUTH_NAME, ADMIN_KEY);
    const titles: string[] = [];
    for (const [hash, heading] of [
      ['#/clusters', /^Clusters$/],
      ['#/clusters/1/capacity', /^Capacity planning — default$/],
      ['#/users', /^Users$/],
      [`#/users/${aliceId}`, /^User alice$/],
      [`#/users/${aliceId}/s3`, /^S3 credentials of alice$/],
      ['#/operators', /^Operators$/],
      ['#/audit', /^Audit trail$/],
      ['#/clusters/1/utilization', /^Utilization — default$/],
    ] as Array<[string, RegExp]>) {
      await visit(page, hash, heading);
      await page.waitForFunction(
        (h) => new RegExp(h).test(document.title.replace(/ · Cairn console$/, '')),
        heading.source,
      );
      titles.push(await page.title());
    }
    expect(titles).toEqual(
      [
        'Clusters',
        'Capacity planning — default',
        'Users',
        'User alice',
        'S3 credentials of alice',
        'Operators',
        'Audit trail',
        'Utilization — default',
      ].map((t) => `${t} · Cairn console`),
    );
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it("when the capacity page shows a device report, then its figures are the API's, rounded only for display", async () => {
    const { page, problems } = await openPage();
    await signIn(page, ADMIN_AUTH_NAME, ADMIN_KEY);
    await visit(page, '#/clusters/1/capacity', /^Capacity planning/);
    const { capacity } = await api<{
      capacity: Array<Record<string, number | string> & { pct_used_stats: Record<string, number> }>;
    }>('GET', 'clusters/1/capacity/list/');
    expect(capacity.map((e) => e.ring_set)).toEqual(['gold', 'gold,silver', 'silver']);
    for (const e of capacity) {
      const row = page.locator(`tr[data-ring-set="${e.ring_set}"]`);
      const cell = async (field: string) => {
        const td = row.locator(`td[data-field="${field}"]`);
        return { raw: Number(await td.getAttribute('data-raw')), text: (await td.textContent())?.trim() };
      };
      for (const f of ['total_raw_tb', 'total_used_tb', 'total_free_tb']) {
        const v = e[f] as number;
        expect(await cell(f)).toEqual({ raw: v, text: formatTb(v) });
      }
      expect(await cell('total_used_pct')).toEqual({
        raw: e.total_used_pct,
        text: `${(e.total_used_pct as number).toFixed(1)} %`,
      });
      for (const f of ['min', 'avg', 'pct_95', 'max']) {
        const v = e.pct_used_stats[f]!;
        expect(await cell(f)).toEqual({ raw: v, text: `${v.toFixed(1)} %` });
      }
      expect(await cell('count')).toEqual({ raw: e.pct_used_stats.count, text: String(e.pct_used_stats.count) });
      // The histogram counts the same devices the statistics cover.
      const chart = page.getByRole('img', {
        name: new RegExp(`^Devices of ring set ${e.ring_set} by percent used: ${e.pct_used_stats.count} devices`),
      });
      await expect(chart.count()).resolves.toBe(1);
    }
    // Past 80 %: the ring set is flagged, and the device table can be narrowed to those devices.
    const warned = capacity.filter((e) => (e.total_used_pct as number) >= 80).length;
    expect(warned).toBeGreaterThan(0);
    await expect(page.locator('.card .warning').count()).resolves.toBe(warned);
    const over = deviceReport().devices.filter(
      (d) =>
        typeof d.used_bytes === 'number' &&
        (d.used_bytes as number) / ((d.used_bytes as number) + (d.avail_bytes as number)) >= 0.8,
    ).length;
    expect(over).toBeGreaterThan(0);
    await page.getByLabel(/only past 80/).check();
    await expect(page.locator('table.devices tbody tr').count()).resolves.toBe(over);
    // A header click sorts by that column: Device A–Z (natural order), then Z–A.
    const deviceColumn = () => page.locator('table.devices tbody tr td:nth-child(2)').allTextContents();
    const natural = (names: string[]) => [...names].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
    await page.getByRole('button', { name: 'Device', exact: true }).click();
    await expect(page.locator('table.devices th[aria-sort="ascending"]').textContent()).resolves.toMatch(/^Device/);
    const ascending = await deviceColumn();
    expect(ascending).toEqual(natural(ascending));
    await page.getByRole('button', { name: 'Device', exact: true }).click();
    await expect(page.locator('table.devices th[aria-sort="descending"]').textContent()).resolves.toMatch(/^Device/);
    expect(await deviceColumn()).toEqual(natural(ascending).reverse());
    await page.getByLabel('Filter devices').fill('sdz1');
    await page.getByLabel(/only past 80/).uncheck();
    await expect(page.locator('table.devices tbody tr').textContent()).resolves.toMatch(/unmounted/);
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it('when an admin creates a user, then it is listed, can be disabled, and deleted after a confirmation that says the data stays', async () => {
    const { page, problems } = await openPage();
    await signIn(page, ADMIN_AUTH_NAME, ADMIN_KEY);
    await visit(page, '#/users', /^Users$/);
    await page.getByRole('button', { name: 'New user' }).click();
    await page.getByLabel('User name').fill('carol');
    await page.getByRole('button', { name: 'Create user' }).click();
    const shown = page.locator('.shown-once code');
    await shown.waitFor();
    const password = (await shown.textContent())!;
    expect(password).toMatch(/^[A-Za-z0-9_-]{32}$/);
    // The password shown is the one the gateway accepts.
    const login = await fetch(`${stack.gatewayUrl}/auth/v1.0`, {
      headers: { 'X-Auth-User': 'carol', 'X-Auth-Key': password },
    });
    expect(login.status).toBe(200);
    await page.getByRole('button', { name: 'Done' }).click();
    await page.locator('tr[data-user="carol"]').waitFor();
    await page.locator('tr[data-user="carol"] a').click();
    await page.getByRole('heading', { level: 1, name: 'User carol' }).waitFor();
    await expect(page.locator('pre code').first().textContent()).resolves.toBe(
      "swift -A 'http://127.0.0.1:5000/auth/v1.0' -U 'carol' -K '<password>' stat",
    );

    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('button', { name: 'Enable' }).waitFor();
    const users = await api<{ objects: Array<{ id: string; enabled: boolean }> }>('GET', 'users/?user=carol');
    expect(users.objects).toEqual([expect.objectContaining({ enabled: false })]);

    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const confirm = page.getByRole('alertdialog');
    await expect(confirm.textContent()).resolves.toMatch(
      /AUTH_carol and all its data stay in Swift.*same name.*owns them again/,
    );
    await page.getByRole('button', { name: 'Delete login' }).click();
    await page.getByRole('heading', { level: 1, name: 'Users' }).waitFor();
    await page.waitForFunction(
      () => !document.querySelector('tr[data-user="carol"]') && document.querySelector('tr[data-user="alice"]'),
    );
    expect((await api<{ meta: { total_count: number } }>('GET', 'users/?user=carol')).meta.total_count).toBe(0);
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it("when a cluster row holds an auth URL with shell syntax (written by SQL), then the clusters page shows it and the user's swift lines carry it single-quoted", async () => {
    const { page, problems } = await openPage();
    const bad = 'http://legacy.example/auth$(id)';
    const [row] = (await stack
      .db('clusters')
      .insert({
        name: 'legacy-url',
        uuid: '0c2d4e6f-8a9b-4c1d-9e2f-3a4b5c6d7e8f',
        auth_url: bad,
        storage_url: 'http://legacy.example/v1',
      })
      .returning('id')) as Array<{ id: number }>;
    const user = await api<{ id: string }>('POST', 'users/', {
      cluster: `/api/v1/clusters/${row!.id}/`,
      user: 'dan',
      password: 'a-long-password-for-dan',
    });
    try {
      await signIn(page, ADMIN_AUTH_NAME, ADMIN_KEY);
      await visit(page, '#/clusters', /^Clusters$/);
      await page.getByRole('heading', { name: 'legacy-url' }).waitFor();
      await visit(page, `#/users/${user.id}`, /^User dan$/);
      const lines = await page.locator('pre code').allTextContents();
      expect(lines[0]).toBe(`swift -A '${bad}/v1.0' -U 'dan' -K '<password>' stat`);
      expect(lines[1]).toContain(`--os-auth-url '${bad}/v3' --os-username 'dan'`);
      expect(problems.take()).toEqual([]);
    } finally {
      await api('DELETE', `users/${user.id}/`);
      await api('DELETE', `clusters/${row!.id}/`);
      await page.close();
    }
  });

  it('when the keyboard alone is used, then a user can be created and its password copied', async () => {
    const { page, problems } = await openPage();
    await signIn(page, ADMIN_AUTH_NAME, ADMIN_KEY);
    await visit(page, '#/users', /^Users$/);
    const tabTo = async (matches: (el: { tag: string; text: string; name: string }) => boolean, what: string) => {
      for (let i = 0; i < 60; i += 1) {
        await page.keyboard.press('Tab');
        const el = await page.evaluate(() => {
          const a = document.activeElement as HTMLInputElement | null;
          return { tag: a?.tagName ?? '', text: a?.textContent?.trim() ?? '', name: a?.name ?? '' };
        });
        if (matches(el)) return;
      }
      throw new Error(`Tab never reached ${what}`);
    };
    await tabTo((e) => e.tag === 'BUTTON' && e.text === 'New user', 'New user');
    await page.keyboard.press('Enter');
    await tabTo((e) => e.tag === 'INPUT' && e.name === 'user', 'the user name');
    await page.keyboard.type('dave-keyboard');
    await page.keyboard.press('Enter');
    await page.locator('.shown-once').waitFor();
    await tabTo((e) => e.tag === 'BUTTON' && e.text === 'Copy', 'the copy button');
    await page.keyboard.press('Enter');
    await page.locator('.shown-once button.copy', { hasText: /Copied|Select and copy/ }).waitFor();
    await tabTo((e) => e.tag === 'BUTTON' && e.text === 'Done', 'Done');
    await page.keyboard.press('Enter');
    await page.locator('tr[data-user="dave-keyboard"]').waitFor();
    expect((await api<{ meta: { total_count: number } }>('GET', 'users/?user=dave-keyboard')).meta.total_count).toBe(1);
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it('when a reader signs in, then no page shows a write control (an admin sees them on the same pages)', async () => {
    const seen = async (name: string, key: string) => {
      const { page, problems } = await openPage();
      await signIn(page, name, key);
      const found: string[] = [];
      for (const [hash, heading] of [
        ['#/clusters', /^Clusters$/],
        ['#/clusters/1/capacity', /^Capacity planning/],
        ['#/users', /^Users$/],
        [`#/users/${aliceId}`, /^User alice$/],
        [`#/users/${aliceId}/s3`, /^S3 credentials of alice$/],
      ] as Array<[string, RegExp]>) {
        await visit(page, hash, heading);
        found.push(...(await writeControls(page)));
      }
      const nav = await page.getByRole('navigation', { name: 'Main' }).textContent();
      if (name === 'watcher') {
        await screenshots(page, 'reader-user');
        expect(problems.take()).toEqual([]);
      }
      await page.close();
      return { found, nav };
    };
    const reader = await seen('watcher', readerKey);
    expect(reader.found).toEqual([]);
    expect(reader.nav).not.toMatch(/Operators|Audit/);
    const admin = await seen(ADMIN_AUTH_NAME, ADMIN_KEY);
    expect(admin.found).toEqual(
      expect.arrayContaining(['New cluster', 'Edit', 'New user', 'Disable', 'Delete', 'Change password']),
    );
    expect(admin.nav).toMatch(/Operators.*Audit/);
  });

  it('when an admin creates and edits a cluster, then the API has it and the monitor shows its endpoints', async () => {
    const { page, problems } = await openPage();
    await signIn(page, ADMIN_AUTH_NAME, ADMIN_KEY);
    await visit(page, '#/clusters', /^Clusters$/);
    await page.getByRole('button', { name: 'New cluster' }).click();
    await page.getByLabel('Name').fill('west');
    await page.getByLabel(/^Auth URL/).fill('https://auth-west.example.com/auth');
    await page.getByLabel(/^Storage URL/).fill('https://swift-west.example.com/v1');
    await page.getByRole('button', { name: 'Create cluster' }).click();
    await page.getByRole('heading', { level: 2, name: 'west' }).waitFor();
    await page.getByText('https://auth-west.example.com/auth/v3', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Edit cluster west' }).click();
    await page.getByLabel('Region').fill('RegionTwo');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForFunction(() => document.body.textContent?.includes('RegionTwo'));
    const west = await api<{ objects: Array<{ region: string; auth_url: string }> }>('GET', 'clusters/?name=west');
    expect(west.objects).toEqual([
      expect.objectContaining({ region: 'RegionTwo', auth_url: 'https://auth-west.example.com/auth' }),
    ]);
    // A refused change is explained next to the form, and nothing is written.
    await page.getByRole('button', { name: 'New cluster' }).click();
    await page.getByLabel('Name').fill('west');
    await page.getByLabel(/^Auth URL/).fill('not a url');
    await page.getByLabel(/^Storage URL/).fill('https://swift-west.example.com/v1');
    await page.getByRole('button', { name: 'Create cluster' }).click();
    await expect(page.locator('form [role="alert"]').textContent()).resolves.toMatch(/auth_url|already exists|URL/i);
    expect((await api<{ meta: { total_count: number } }>('GET', 'clusters/?name=west')).meta.total_count).toBe(1);
    expect(problems.take().every((p) => /HTTP 400|status of 400/.test(p))).toBe(true);
    await page.close();
  });

  it('when an admin creates an operator, then its key is shown once and works, and revoking it stops it', async () => {
    const { page, problems } = await openPage();
    await signIn(page, ADMIN_AUTH_NAME, ADMIN_KEY);
    await visit(page, '#/operators', /^Operators$/);
    await page.getByRole('button', { name: 'New operator' }).click();
    await page.getByLabel(/^Name/).fill('nightly');
    await page.getByLabel('Role').selectOption('reader');
    await page.getByRole('button', { name: 'Create operator' }).click();
    // Making an operator mints a key: the console asks for the admin's own key first.
    const stepUp = page.getByRole('dialog', { name: 'Confirm with your API key' });
    await stepUp.getByLabel('API key').fill(ADMIN_KEY);
    await stepUp.getByRole('button', { name: 'Confirm' }).click();
    const shown = (await page.locator('.shown-once code').textContent())!;
    expect(shown).toMatch(/^nightly:\S{20,}$/);
    const whoami = (auth: string) => fetch(`${stack.apiUrl}/api/v1/whoami/`, { headers: { Authorization: auth } });
    expect((await whoami(`ApiKey ${shown}`)).status).toBe(200);
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('heading', { level: 2, name: 'nightly' }).waitFor();
    await page.getByRole('button', { name: /^Revoke key \S+ of nightly$/ }).click();
    const confirm = page.getByRole('alertdialog', { name: /^Revoke key \S+ of nightly\?$/ });
    await expect(confirm.textContent()).resolves.toMatch(/refused from then on/);
    await expect(confirm.textContent()).resolves.not.toMatch(/signed in with/);
    expect((await whoami(`ApiKey ${shown}`)).status).toBe(200);
    await confirm.getByRole('button', { name: 'Revoke key' }).click();
    await page.waitForFunction(
      () =>
        ![...document.querySelectorAll('button')].some(
          (b) => /of nightly$/.test(b.getAttribute('aria-label') ?? '') && b.textContent === 'Revoke',
        ),
    );
    expect((await whoami(`ApiKey ${shown}`)).status).toBe(401);
    // The one refusal: the API asking for the key before making the operator.
    expect(problems.take().filter((p) => !/\b403\b/.test(p))).toEqual([]);
    await page.close();
  });

  it('when the audit trail is filtered by target type and action, then only matching entries show, newest first', async () => {
    const created = await api<{ id: string; access_key: string }>('POST', 's3_credentials/', {
      user: `/api/v1/users/${aliceId}/`,
    });
    await api('DELETE', `s3_credentials/${created.id}/`);
    const { page, problems } = await openPage();
    await signIn(page, ADMIN_AUTH_NAME, ADMIN_KEY);
    await visit(page, '#/audit', /^Audit trail$/);
    const rows = () =>
      page.evaluate(() =>
        [...document.querySelectorAll('table.audit tbody tr')].map((tr) => {
          const td = tr.querySelectorAll('td');
          return { action: td[2]?.textContent ?? '', target: td[3]?.textContent?.trim() ?? '' };
        }),
      );
    const shows = async (expected: Array<{ action: string; target: string }>) => {
      await page.waitForFunction(
        (n) =>
          document.querySelectorAll('table.audit tbody tr').length === n &&
          !document.querySelector('[aria-busy="true"]'),
        expected.length,
      );
      expect(await rows()).toEqual(expected);
    };
    const fromApi = async (q: string) =>
      (
        await api<{ objects: Array<{ action: string; target_type: string; target_name: string }> }>(
          'GET',
          `audit/?${q}`,
        )
      ).objects.map((a) => ({
        action: a.action,
        target: `${a.target_type} ${a.target_name}`,
      }));

    await page.getByLabel('Target type').selectOption('s3_credentials');
    await page.getByRole('button', { name: 'Apply' }).click();
    // Newest first: the delete after the create, exactly the API's entries for that type.
    const s3 = [
      { action: 'delete', target: `s3_credentials ${created.access_key}` },
      { action: 'create', target: `s3_credentials ${created.access_key}` },
    ];
    expect(await fromApi('target_type=s3_credentials')).toEqual(s3);
    await shows(s3);

    await page.getByLabel('Action').selectOption('create');
    await page.getByRole('button', { name: 'Apply' }).click();
    await shows([s3[1]!]);

    // Another type: every row is of that type and action, in the API's newest-first order.
    await page.getByLabel('Target type').selectOption('users');
    await page.getByRole('button', { name: 'Apply' }).click();
    const users = await fromApi('target_type=users&action=create');
    expect(users.length).toBeGreaterThanOrEqual(2);
    expect(users.every((u) => u.action === 'create' && u.target.startsWith('users '))).toBe(true);
    await shows(users);
    expect(await page.evaluate(() => location.hash)).toBe('#/audit?action=create&target_type=users');
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it('when an admin revokes its own keys, then the confirmation says which one it is signed in with, and revoking that one signs it out', async () => {
    const created = await api<{ id: number; api_key: string }>('POST', 'operators/', {
      name: 'keyholder',
      role: 'admin',
      clusters: [],
    });
    const added = await api<{ id: string; key: string }>('POST', `operators/${created.id}/keys/`);
    const { objects: keys } = await api<{ objects: Array<{ id: string }> }>('GET', `operators/${created.id}/keys/`);
    const signedInKey = keys.find((k) => k.id !== added.id)!.id;
    const { page, problems } = await openPage();
    await signIn(page, 'keyholder', created.api_key);
    await visit(page, '#/operators', /^Operators$/);
    const revoke = (id: string) => page.getByRole('button', { name: `Revoke key ${id} of keyholder` });
    const confirm = (id: string) => page.getByRole('alertdialog', { name: `Revoke key ${id} of keyholder?` });

    // The other key: no warning about this session; Cancel keeps it.
    await revoke(added.id).click();
    await expect(confirm(added.id).textContent()).resolves.not.toMatch(/signed in with/);
    await confirm(added.id).getByRole('button', { name: 'Cancel' }).click();
    await expect(confirm(added.id).count()).resolves.toBe(0);
    const whoami = (key: string) =>
      fetch(`${stack.apiUrl}/api/v1/whoami/`, { headers: { Authorization: `ApiKey keyholder:${key}` } });
    expect((await whoami(added.key)).status).toBe(200);
    expect(await axeFindings(page)).toEqual([]);

    // The key of this session: the confirmation says so; revoking it signs out with a reason.
    await revoke(signedInKey).click();
    await expect(confirm(signedInKey).textContent()).resolves.toMatch(
      /This is the key you are signed in with\..*signs you out/,
    );
    await page.screenshot({ path: join(ARTIFACTS, 'revoke-own-key-1280x800.png') });
    await confirm(signedInKey).getByRole('button', { name: 'Revoke key' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await expect(page.getByRole('status').first().textContent()).resolves.toMatch(
      /revoked the API key you were signed in with/,
    );
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect((await whoami(created.api_key)).status).toBe(401);
    expect((await whoami(added.key)).status).toBe(200);
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it('when the key is revoked while signed in, then the console forgets it and asks to sign in again', async () => {
    const created = await api<{ id: number; api_key: string }>('POST', 'operators/', {
      name: 'short-lived',
      role: 'reader',
      clusters: [],
    });
    const { page } = await openPage();
    await signIn(page, 'short-lived', created.api_key);
    await api('DELETE', `operators/${created.id}/`);
    await page.evaluate(() => {
      location.hash = '#/users';
    });
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await expect(page.getByRole('status').first().textContent()).resolves.toMatch(/session has ended.*sign in again/);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.close();
  });

  /** Requests by class in the transfer record the utilization test sends: 30 in all. */
  const CLASSES_SENT = {
    req_get: 12,
    req_head: 3,
    req_put: 5,
    req_post: 1,
    req_delete: 2,
    req_list: 4,
    req_copy: 2,
    req_other: 1,
  };
  /** The account's requests by class and its traffic by API and network, as the page shows them. */
  const breakdownShown = (page: Page) =>
    page.locator('.breakdown').evaluate((b) => ({
      classes: Object.fromEntries(
        [...b.querySelectorAll('td[data-class]')].map((td) => [td.getAttribute('data-class'), td.textContent]),
      ),
      shares: Object.fromEntries(
        [...b.querySelectorAll('tr[data-share]')].map((tr) => [
          tr.getAttribute('data-share'),
          [...tr.querySelectorAll('td')].map((td) => td.textContent),
        ]),
      ),
    }));
  // What was sent, in the page's units: Swift is the total less S3, external the total less internal.
  const BREAKDOWN_EXPECTED = {
    classes: {
      ...Object.fromEntries(Object.entries(CLASSES_SENT).map(([f, n]) => [f.slice('req_'.length), String(n)])),
      errors: '2',
    },
    shares: {
      'Swift API': [formatBytes(750_000), formatBytes(1_500_000), '24'],
      'S3 API': [formatBytes(250_000), formatBytes(500_000), '6'],
      External: [formatBytes(900_000), formatBytes(500_000), '20'],
      Internal: [formatBytes(100_000), formatBytes(1_500_000), '10'],
    },
  };

  it("when the utilization page opens, then it shows the API's summary and an account's charts", async () => {
    const hourAgo = new Date(Date.now() - 3_600_000);
    const { page, problems } = await openPage();
    await signIn(page, ADMIN_AUTH_NAME, ADMIN_KEY);
    const hour = new Date(Math.floor(hourAgo.getTime() / 3_600_000) * 3_600_000);
    await api('POST', 'clusters/1/utilization/storage/', {
      sampled_at: hourAgo.toISOString(),
      samples: [
        {
          account: 'AUTH_alice',
          bytes_used: 5e9,
          object_count: 10,
          container_count: 2,
          policies: [{ index: 0, bytes_used: 5e9, object_count: 10, container_count: 2 }],
        },
      ],
    });
    await api('POST', 'clusters/1/utilization/transfer/', {
      batch_id: 'console-browser-test',
      covered: { start: hour.toISOString(), end: new Date(hour.getTime() + 3_600_000).toISOString() },
      records: [
        {
          account: 'AUTH_alice',
          policy_index: 0,
          hour: hour.toISOString(),
          bytes_in: 1_000_000,
          bytes_out: 2_000_000,
          req_count: 30,
          ...CLASSES_SENT,
          req_errors: 2,
          s3_bytes_in: 250_000,
          s3_bytes_out: 500_000,
          s3_req_count: 6,
          internal_bytes_in: 100_000,
          internal_bytes_out: 1_500_000,
          internal_req_count: 10,
        },
      ],
    });
    await visit(page, '#/clusters/1/utilization', /^Utilization — default$/);
    const start = await page.getByLabel('From (UTC)').inputValue();
    const summary = await api<{
      meta: { total_count: number };
      objects: Array<{
        account: string;
        bytes_used_avg: number;
        bytes_in: number;
        bytes_out: number;
        policies: Array<{ policy_index: number; bytes_used_avg: number }>;
      }>;
    }>('GET', `clusters/1/utilization/summary/?start=${encodeURIComponent(start)}&limit=1000`);
    const alice = summary.objects.find((o) => o.account === 'AUTH_alice')!;
    expect(alice.bytes_in).toBe(1_000_000);
    // The cluster's storage by policy: each bar is the sum of the accounts' averages in that policy.
    expect(summary.meta.total_count).toBe(summary.objects.length);
    const byPolicy = new Map<number, number>();
    for (const o of summary.objects)
      for (const p of o.policies) byPolicy.set(p.policy_index, (byPolicy.get(p.policy_index) ?? 0) + p.bytes_used_avg);
    expect(byPolicy.get(0)).toBeGreaterThanOrEqual(5e9);
    const bars = await page
      .locator('svg.policybars g[data-policy]')
      .evaluateAll((gs) => gs.map((g) => [Number(g.getAttribute('data-policy')), Number(g.getAttribute('data-raw'))]));
    expect(bars).toEqual([...byPolicy.entries()].sort((a, b) => a[0] - b[0]));
    await expect(
      page.getByRole('img', { name: /^Average bytes stored per storage policy, the cluster: gold / }).count(),
    ).resolves.toBe(1);
    const row = page.locator('tr[data-account="AUTH_alice"]');
    await expect(row.locator('td').nth(0).getAttribute('data-raw')).resolves.toBe(String(alice.bytes_used_avg));
    await expect(row.locator('td').nth(4).getAttribute('data-raw')).resolves.toBe(String(alice.bytes_in));
    await expect(row.locator('td').nth(5).getAttribute('data-raw')).resolves.toBe(String(alice.bytes_out));
    const [csv] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    const downloaded = readFileSync((await csv.path())!, 'utf8');
    expect(downloaded).toMatch(/^account,start,end,hours,bytes_used_avg[^\n]*\r?\n(.*\r?\n)*AUTH_alice,/);
    // Policy columns named as the bars name them (policy_headers=name), not p<index>_.
    expect(downloaded.split('\r\n')[0]).toMatch(/,gold_bytes_used_avg,/);
    expect(downloaded.split('\r\n')[0]).not.toMatch(/,p0_/);
    await row.getByRole('link', { name: 'AUTH_alice' }).click();
    // One hour of data: each figure gives its single sample as a sentence, in the table's time.
    await page.getByRole('heading', { level: 2, name: 'Account AUTH_alice' }).waitFor();
    await page.waitForFunction(
      () =>
        document.querySelectorAll('.timechart canvas, .timechart .chart-note').length === 2 &&
        !document.querySelector('.loading'),
    );
    await expect(page.locator('.legend', { hasText: 'Over the range' }).textContent()).resolves.toMatch(
      `in ${formatBytes(1_000_000)} · out ${formatBytes(2_000_000)} · 30 requests`,
    );
    await expect(breakdownShown(page)).resolves.toEqual(BREAKDOWN_EXPECTED);
    expect(problems.take()).toEqual([]);
    expect(await axeFindings(page)).toEqual([]);
    await screenshots(page, 'utilization');
    // The user's own page shows the same account's last 7 days.
    await visit(page, `#/users/${aliceId}`, /^User alice$/);
    await page.getByRole('heading', { level: 2, name: 'Account AUTH_alice' }).waitFor();
    await page.waitForFunction(
      () =>
        document.querySelectorAll('.timechart canvas, .timechart .chart-note').length === 2 &&
        !document.querySelector('.loading'),
    );
    await expect(page.locator('.legend', { hasText: 'Over the range' }).textContent()).resolves.toMatch(
      `in ${formatBytes(1_000_000)} · out ${formatBytes(2_000_000)} · 30 requests`,
    );
    await expect(breakdownShown(page)).resolves.toEqual(BREAKDOWN_EXPECTED);
    expect(problems.take()).toEqual([]);
    expect(await axeFindings(page)).toEqual([]);
    await page.close();
  });

  it('when an operator signs out, then the key was never stored and a reload asks to sign in again', async () => {
    const { page, problems } = await openPage();
    await signIn(page, ADMIN_AUTH_NAME, ADMIN_KEY);
    expect(
      await page.evaluate(() => JSON.stringify(sessionStorage) + JSON.stringify(localStorage) + document.cookie),
    ).not.toContain(ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(problems.urls.filter((u) => u.includes(ADMIN_KEY))).toEqual([]);
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it("when an admin opens a user's S3 credentials, then it creates one whose secret is shown once, lists it and deletes it", async () => {
    const { page, problems } = await openPage();
    await signIn(page, ADMIN_AUTH_NAME, ADMIN_KEY);
    await visit(page, `#/users/${aliceId}`, /^User alice$/);
    await page.getByRole('link', { name: 'S3 credentials' }).click();
    await page.getByRole('heading', { level: 1, name: 'S3 credentials of alice' }).waitFor();
    const before = await api<{ objects: Array<{ access_key: string }> }>('GET', `s3_credentials/?user=${aliceId}`);
    await page.getByRole('button', { name: 'New S3 credential' }).click();
    const secret = (await page.locator('.shown-once code').textContent())!;
    expect(secret).toMatch(/^\S{40}$/);
    const after = await api<{ objects: Array<{ id: string; access_key: string; secret?: string }> }>(
      'GET',
      `s3_credentials/?user=${aliceId}`,
    );
    expect(after.objects).toHaveLength(before.objects.length + 1);
    const created = after.objects.find((o) => !before.objects.some((b) => b.access_key === o.access_key))!;
    expect(created.secret).toBeUndefined();
    await expect(page.getByText(created.access_key).first().isVisible()).resolves.toBe(true);
    await page.getByRole('button', { name: 'Done' }).click();
    // Shown once: gone from the page, and nowhere in what a script could read.
    expect(await page.locator('.shown-once').count()).toBe(0);
    expect(await page.evaluate(() => document.body.textContent ?? '')).not.toContain(secret);
    await page.getByRole('button', { name: `Delete S3 credential ${created.access_key}` }).click();
    const confirm = page.getByRole('alertdialog', { name: `Delete S3 credential ${created.access_key}?` });
    await confirm.getByRole('button', { name: 'Delete credential' }).click();
    await page.waitForFunction((k) => !document.body.textContent?.includes(k), created.access_key);
    expect((await api<{ objects: unknown[] }>('GET', `s3_credentials/?user=${aliceId}`)).objects).toHaveLength(
      before.objects.length,
    );
    expect(await axeFindings(page)).toEqual([]);
    await screenshots(page, 's3-credentials');
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it('when an admin creates an S3 credential with an expiry, then the list shows when it ends; one past its expiry is marked expired', async () => {
    // One that expires moments from now, made through the API (the form takes only future dates).
    const soonExpiry = Date.now() + 1500;
    const soon = await api<{ access_key: string; id: string }>('POST', 's3_credentials/', {
      user: `/api/v1/users/${aliceId}/`,
      expires_at: new Date(soonExpiry).toISOString(),
    });
    const { page, problems } = await openPage();
    await signIn(page, ADMIN_AUTH_NAME, ADMIN_KEY);
    await visit(page, `#/users/${aliceId}/s3`, /^S3 credentials of alice$/);
    // A week from now, in the reader's local time as the input takes it.
    const inAWeek = new Date(Date.now() + 7 * 86_400_000);
    const pad = (n: number) => String(n).padStart(2, '0');
    const local = `${inAWeek.getFullYear()}-${pad(inAWeek.getMonth() + 1)}-${pad(inAWeek.getDate())}T${pad(inAWeek.getHours())}:${pad(inAWeek.getMinutes())}`;
    await page.getByLabel(/^Expires/).fill(local);
    await page.getByRole('button', { name: 'New S3 credential' }).click();
    await page.locator('.shown-once code').waitFor();
    await page.getByRole('button', { name: 'Done' }).click();
    const listed = await api<{ objects: Array<{ access_key: string; id: string; expires_at: string | null }> }>(
      'GET',
      `s3_credentials/?user=${aliceId}&expires_at__gt=${encodeURIComponent(new Date(Date.now() + 86_400_000).toISOString())}`,
    );
    expect(listed.objects).toHaveLength(1);
    const made = listed.objects[0]!;
    expect(Math.abs(Date.parse(made.expires_at!) - inAWeek.getTime())).toBeLessThan(60_000);
    const madeRow = page.getByRole('row').filter({ hasText: made.access_key });
    await expect(madeRow.textContent()).resolves.toMatch(/\(in \d+ days\)/);
    expect(await madeRow.getByText('expired', { exact: true }).count()).toBe(0);

    // Until the clock (the browser's too) has passed that expiry, however long the steps above took.
    while (Date.now() <= soonExpiry) await new Promise((r) => setTimeout(r, Math.min(50, soonExpiry - Date.now() + 1)));
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'S3 credentials of alice' }).waitFor();
    const soonRow = page.getByRole('row').filter({ hasText: soon.access_key });
    await soonRow.waitFor();
    expect(await soonRow.getByText('expired', { exact: true }).count()).toBe(1);
    expect(await axeFindings(page)).toEqual([]);
    for (const id of [soon.id, made.id]) await api('DELETE', `s3_credentials/${id}/`);
    expect(problems.take()).toEqual([]);
    await page.close();
  });
});
