import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { ADMIN_AUTH, startStack, type Stack } from '../support/stack';
import { formatBytes } from '../../packages/console/src/lib/format';
import { launch, type Browser } from './chromium';
import { axeFindings, signedIn as signIn, visit } from './console-page';

/**
 * The console page by page, as an operator reads it (Debian's chromium against the management API
 * and the gateway on a real Postgres): secrets shown once stay with their user, one byte unit
 * everywhere, policy names instead of indexes, the users list's quota states and order, the
 * columns that matter in view at phone width, the audit trail without the collectors' writes, the
 * time charts' axes, and the console's scripts sent compressed. Screenshots go to browser/artifacts/.
 */
const CONSOLE_DIR = join(__dirname, '..', '..', 'packages', 'console', 'dist');
const ARTIFACTS = join(__dirname, 'artifacts');
const GIB = 2 ** 30;
const TIB = 2 ** 40;
const HOUR = 3_600_000;
const GWEN_PW = 'a-long-password-for-gwen-x';
/** An account's bytes as two pages once showed them: 120.09 GB on one, 119.44 GiB… on the other. */
const DORA_BYTES = 120_090_000_000;

describe('the console, page by page', () => {
  let stack: Stack;
  let browser: Browser;
  const ids: Record<string, string> = {};
  const hourNow = Math.floor(Date.now() / HOUR) * HOUR;
  const iso = (ms: number) => new Date(ms).toISOString();

  const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${stack.apiUrl}/api/v1/${path}`, {
      method,
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json', Accept: 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (res.status === 204 ? undefined : await res.json()) as T;
  };

  const account = (name: string, bytes: number, gold = bytes) => ({
    account: `AUTH_${name}`,
    bytes_used: bytes,
    object_count: 10,
    container_count: 1,
    policies: [{ index: 0, bytes_used: gold, object_count: 10, container_count: 1 }],
  });

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    // An S3 secret key, so S3 credentials can be made.
    stack = await startStack({
      database: 'postgres',
      consoleDir: CONSOLE_DIR,
      s3SecretKeys: `console:${randomBytes(32).toString('base64')}`,
    });
    await api('PUT', 'clusters/1/devices/', {
      policies: [
        { index: 0, name: 'gold', default: true },
        { index: 1, name: 'silver' },
      ],
      devices: [
        { node: '10.0.0.1:6200', device: 'sdb1', policies: ['gold'], used_bytes: 1e12, avail_bytes: 4e12 },
        { node: '10.0.0.2:6200', device: 'sdb1', policies: ['silver'], used_bytes: 4.5e12, avail_bytes: 0.5e12 },
      ],
    });
    for (const name of ['erin', 'frank', 'bob', 'carol', 'dora', 'solo'])
      ids[name] = (await stack.createUser(name, `a-long-password-for-${name}-x`)).id;
    ids.gwen = (await stack.createUser('gwen', GWEN_PW)).id;
    for (const [name, extra] of [
      ['over', { quota_bytes: 100 * GIB, quota_bytes_policy: { gold: TIB, silver: 2 * TIB } }],
      ['near', { quota_bytes: 100 * GIB }],
      ['fine', { quota_bytes: 100 * GIB, quota_bytes_policy: { gold: 50 * GIB } }],
      ['unsampled', { quota_bytes: 100 * GIB }],
    ] as const)
      ids[name] = (await stack.createUser(name, `a-long-password-for-${name}-x`, extra)).id;
    // Three hours of dora (3, 1 and 2 bytes transferred: a value axis that must not tick at 0.5 byte),
    // and the latest hour of the others.
    for (const h of [3, 2, 1]) {
      const samples = [account('dora', DORA_BYTES)];
      if (h === 1)
        samples.push(
          account('over', 120 * GIB),
          account('near', 85 * GIB),
          account('fine', 10 * GIB),
          account('solo', 5 * GIB),
        );
      await api('POST', 'clusters/1/utilization/storage/', { sampled_at: iso(hourNow - h * HOUR + 60_000), samples });
    }
    await api('POST', 'clusters/1/utilization/transfer/', {
      batch_id: 'pages-test',
      covered: { start: iso(hourNow - 3 * HOUR), end: iso(hourNow) },
      records: [3, 2, 1].map((h) => ({
        account: 'AUTH_dora',
        policy_index: 0,
        hour: iso(hourNow - h * HOUR),
        bytes_in: h,
        bytes_out: 1,
        req_count: 1,
      })),
    });
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  const signedIn = () => signIn(browser, stack.apiUrl);

  it("when a once-shown secret is on screen and the page moves to another user, then the other user's page shows none of it", async () => {
    const { page, problems } = await signedIn();
    await visit(page, `#/users/${ids.frank}`, /^User frank$/);
    await visit(page, `#/users/${ids.erin}`, /^User erin$/);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('button', { name: 'Set password' }).click();
    const shown = page.locator('.shown-once code');
    await shown.waitFor();
    const password = (await shown.textContent())!;
    await expect(page.locator('.shown-once').textContent()).resolves.toMatch(/New password of erin/);
    // Back, as the browser's button does: frank's page, and nothing of erin's note.
    await page.goBack();
    await page.getByRole('heading', { level: 1, name: /^User frank$/ }).waitFor();
    await page.waitForFunction(() => document.querySelectorAll('.loading').length === 0);
    expect(await page.locator('.shown-once').count()).toBe(0);
    expect(await page.evaluate(() => document.body.textContent ?? '')).not.toContain(password);

    // An S3 secret of carol's, then bob's S3 page by its address.
    await visit(page, `#/users/${ids.carol}/s3`, /^S3 credentials of carol$/);
    await page.getByRole('button', { name: 'New S3 credential' }).click();
    const secret = (await page.locator('.shown-once code').textContent())!;
    expect(secret).toMatch(/^\S{40}$/);
    await visit(page, `#/users/${ids.bob}/s3`, /^S3 credentials of bob$/);
    expect(await page.locator('.shown-once').count()).toBe(0);
    expect(await page.evaluate(() => document.body.textContent ?? '')).not.toContain(secret);
    // bob's page offers its own form, not carol's note.
    await page.getByRole('button', { name: 'New S3 credential' }).waitFor();
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it('when an account is shown on the users list and on the utilization page, then both read the same figure in the same unit', async () => {
    const { page, problems } = await signedIn();
    await visit(page, '#/users?cluster=1&q=dora', /^Users$/);
    const onUsers = (await page.locator('tr[data-user="dora"] td[data-field="usage"]').textContent())!.trim();
    expect(onUsers).toBe(formatBytes(DORA_BYTES));
    expect(onUsers).toMatch(/ GiB$/);
    await visit(page, '#/clusters/1/utilization?q=AUTH_dora', /^Utilization — default$/);
    const cell = page.locator('tr[data-account="AUTH_dora"] td').first();
    await expect(cell.textContent()).resolves.toBe(onUsers);
    // The other unit is a hover away.
    await expect(cell.getAttribute('title')).resolves.toBe('120,090,000,000 bytes (120.09 GB)');
    // Capacity and quotas side by side in that unit too.
    await visit(page, '#/clusters/1/capacity', /^Capacity planning/);
    const section = page.locator('section', { has: page.getByRole('heading', { name: 'Quotas against capacity' }) });
    const figures = await section.locator('dd').allTextContents();
    expect(figures.filter((f) => /\d (TB|GB)\b/.test(f))).toEqual([]);
    expect(figures.filter((f) => /\d (TiB|GiB)$/.test(f)).length).toBeGreaterThanOrEqual(3);
    await expect(page.locator('tr[data-ring-set="gold"] td[data-field="total_raw_tb"]').textContent()).resolves.toBe(
      formatBytes(5e12),
    );
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it('when storage per policy is shown, then by the policy names, and the user page sets per-policy usage beside per-policy quotas', async () => {
    const { page, problems } = await signedIn();
    await visit(page, '#/clusters/1/utilization', /^Utilization — default$/);
    await page.locator('svg.policybars g[data-policy-name="gold"]').waitFor();
    await expect(page.locator('svg.policybars g[data-policy="0"] text').first().textContent()).resolves.toBe('gold');
    await expect(page.locator('svg.policybars').getAttribute('aria-label')).resolves.toMatch(/: gold /);
    const legend = (await page.locator('.legend', { hasText: 'Average stored per policy' }).textContent())!;
    expect(legend).toContain('gold ');
    expect(legend).not.toMatch(/policy \d/);
    // An account's chart: a series per policy, by name.
    await visit(page, '#/clusters/1/utilization?account=AUTH_dora', /^Utilization — default$/);
    await page.waitForFunction(
      () =>
        document.querySelectorAll('.timechart canvas').length === 2 &&
        [...document.querySelectorAll('.timechart .u-legend .u-label')].some((l) => l.textContent === 'gold'),
    );
    const series = await page.locator('.timechart').first().locator('.u-legend .u-label').allTextContents();
    expect(series).toContain('gold');
    expect(series.join(' ')).not.toMatch(/policy \d/);

    // fine's gold quota, with what the account holds in gold at its latest sample beside it.
    await visit(page, `#/users/${ids.fine}`, /^User fine$/);
    const gold = page.locator('tr[data-quota="quota_bytes_policy-gold"] td[data-field="used"]');
    await gold.filter({ hasText: /GiB/ }).waitFor();
    await expect(gold.textContent()).resolves.toBe('10 GiB (20.0 %)');
    await expect(gold.getByRole('img').getAttribute('aria-label')).resolves.toBe(
      'Byte quota, policy gold of fine: 20.0 % used',
    );
    // silver: a quota row with no usage in the sample: nothing stored there.
    await expect(
      page.locator('tr[data-quota="quota_bytes_policy-silver"] td[data-field="used"]').textContent(),
    ).resolves.toBe(formatBytes(0));
    expect(await axeFindings(page)).toEqual([]);
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it('when users have per-policy byte quotas, then the capacity page sets them against each ring set that holds the policy', async () => {
    const cluster = await api<{ quota_bytes_policy_total: Record<string, number> }>('GET', 'clusters/1/');
    expect(cluster.quota_bytes_policy_total).toEqual({ gold: TIB + 50 * GIB, silver: 2 * TIB });
    const { page, problems } = await signedIn();
    await visit(page, '#/clusters/1/capacity', /^Capacity planning/);
    const row = (ringSet: string) => page.locator(`table.policy-quotas tr[data-ring-set="${ringSet}"]`);
    const cells = async (ringSet: string) =>
      Object.fromEntries(
        await row(ringSet)
          .locator('td[data-field]')
          .evaluateAll((tds) => tds.map((td) => [td.getAttribute('data-field'), td.textContent])),
      ) as Record<string, string>;
    // Each ring set has 5 TB raw; usable is raw ÷ 3 (three replicas, the page's default).
    expect(await cells('gold')).toEqual({
      quota: formatBytes(TIB + 50 * GIB),
      usable: `${((TIB + 50 * GIB) / (5e12 / 3)).toFixed(2)}×`,
      'raw-ratio': `${((TIB + 50 * GIB) / 5e12).toFixed(2)}×`,
    });
    expect(await cells('silver')).toEqual({
      quota: '2 TiB',
      usable: `${((2 * TIB) / (5e12 / 3)).toFixed(2)}×`,
      'raw-ratio': `${((2 * TIB) / 5e12).toFixed(2)}×`,
    });
    // silver's quotas promise more than its usable capacity: the row is marked.
    await expect(row('silver').getAttribute('class')).resolves.toBe('warn');
    await page
      .locator('section', { has: page.getByRole('heading', { name: 'Quotas against capacity' }) })
      .screenshot({ path: join(ARTIFACTS, 'quotas-capacity-policies-1280.png') });
    expect(await axeFindings(page)).toEqual([]);
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it('when users are over, near or within their quota or not sampled, then the list shows each its own way, a quota column, and sorts fullest first', async () => {
    const { page, problems } = await signedIn();
    await visit(page, '#/users?cluster=1&order=user', /^Users$/);
    const usage = (user: string) => page.locator(`tr[data-user="${user}"] td[data-field="usage"]`);
    await expect(usage('over').getAttribute('data-quota-state')).resolves.toBe('over');
    await expect(usage('over').textContent()).resolves.toBe('120 GiB / 100 GiB (120.0 %) over quota');
    await expect(usage('over').locator('svg').getAttribute('class')).resolves.toBe('usedbar over');
    await expect(usage('near').getAttribute('data-quota-state')).resolves.toBe('near');
    await expect(usage('near').textContent()).resolves.toBe('85 GiB / 100 GiB (85.0 %) nearly full');
    await expect(usage('near').locator('svg').getAttribute('class')).resolves.toBe('usedbar warn');
    await expect(usage('fine').getAttribute('data-quota-state')).resolves.toBe('ok');
    // Not sampled reads one way, with a quota or without.
    await expect(usage('unsampled').textContent()).resolves.toBe('not sampled / 100 GiB');
    await expect(usage('frank').textContent()).resolves.toBe('not sampled');
    // Where Swift stands with the quotas, in a column of its own.
    await expect(page.getByRole('columnheader', { name: 'Quota', exact: true }).count()).resolves.toBe(1);
    const status = await page.locator('tr[data-user="over"] td[data-field="quota_status"]').textContent();
    const { quota_status } = await api<{ quota_status: string | null }>('GET', `users/${ids.over}/`);
    expect(status).toBe(quota_status ?? 'none');
    await page.screenshot({ path: join(ARTIFACTS, 'users-quota-states-1280.png'), fullPage: true });

    await page.getByLabel('Order').selectOption('fullest');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForFunction(() => location.hash.includes('order=fullest'));
    // The hash changes before the new page is asked for, so "nothing loading" can hold while the
    // old rows still show: wait (bounded) for the rows the order should give, then compare them.
    const fullest = ['over', 'near', 'fine', 'unsampled'];
    await page
      .waitForFunction(
        (want) =>
          [...document.querySelectorAll('table.users tbody tr')].map((tr) => tr.getAttribute('data-user')).join() ===
          want.join(),
        fullest,
        { timeout: 10_000 },
      )
      .catch(() => undefined);
    await expect(
      page.locator('table.users tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-user'))),
    ).resolves.toEqual(fullest);
    expect(await axeFindings(page)).toEqual([]);
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it('when the console is 390 px wide, then the column each table is read for is in view and an audit time takes two lines', async () => {
    // gwen makes an application credential through the gateway, so its page has a Revoke button.
    const gw = `${stack.gatewayUrl}/auth`;
    const login = await fetch(`${gw}/v3/auth/tokens`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        auth: {
          identity: {
            methods: ['password'],
            password: { user: { name: 'gwen', domain: { id: 'default' }, password: GWEN_PW } },
          },
        },
      }),
    });
    expect(login.status).toBe(201);
    const made = await fetch(`${gw}/v3/users/gwen/application_credentials`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Auth-Token': login.headers.get('x-subject-token')! },
      body: JSON.stringify({
        application_credential: { name: 'backups', description: 'nightly rclone to the DR site' },
      }),
    });
    expect(made.status).toBe(201);

    const { page, problems } = await signedIn();
    await page.setViewportSize({ width: 390, height: 844 });
    const inView = (selector: string) =>
      page
        .locator(selector)
        .first()
        .evaluate((el) => {
          const r = el.getBoundingClientRect();
          return { left: Math.round(r.left), right: Math.round(r.right), width: Math.round(r.width) };
        });
    const expectInView = async (what: string, selector: string) => {
      const r = await inView(selector);
      expect({ what, inView: r.left >= 0 && r.right <= 390 && r.width > 0 }).toEqual({ what, inView: true });
    };
    const pages: Array<[string, string, RegExp, Array<[string, string]>]> = [
      [
        'users',
        '#/users?cluster=1&order=user',
        /^Users$/,
        [['Used / quota', 'tr[data-user="over"] td[data-field="usage"]']],
      ],
      [
        'capacity',
        '#/clusters/1/capacity',
        /^Capacity planning/,
        [
          ['Used % of a ring set', 'tr[data-ring-set="gold"] td[data-field="total_used_pct"]'],
          ['Used % of a device', 'table.devices tbody tr td[data-field="pct"]'],
        ],
      ],
      [
        'user-quotas',
        `#/users/${ids.fine}`,
        /^User fine$/,
        [
          ['the byte quota field', 'tr[data-quota="quota_bytes-all"] input'],
          ['Set', 'tr[data-quota="quota_bytes-all"] button[type="submit"]'],
          ['Clear', 'tr[data-quota="quota_bytes-all"] button[type="button"]'],
        ],
      ],
      [
        'application-credentials',
        `#/users/${ids.gwen}/application-credentials`,
        /^Application credentials of gwen$/,
        [['Revoke', 'table.application-credentials tbody tr button.danger']],
      ],
    ];
    for (const [name, hash, heading, columns] of pages) {
      await visit(page, hash, heading);
      for (const [what, selector] of columns) await expectInView(`${name}: ${what}`, selector);
      expect({ name, scrollWidth: await page.evaluate(() => document.documentElement.scrollWidth) }).toEqual({
        name,
        scrollWidth: 390,
      });
      await page.screenshot({ path: join(ARTIFACTS, `${name}-phone-390x844.png`), fullPage: true });
    }
    await visit(page, '#/audit', /^Audit trail$/);
    const lines = await page
      .locator('table.audit tbody tr td.time')
      .first()
      .evaluate((td) => {
        // Lines of the cell's own text (the row may be taller for its other cells): its text's boxes,
        // top to bottom, a new line where a box starts below the one before.
        const boxes: DOMRect[] = [];
        const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          const range = document.createRange();
          range.selectNodeContents(n);
          boxes.push(...[...range.getClientRects()].filter((r) => r.width > 0));
        }
        boxes.sort((a, b) => a.top - b.top);
        let lines = 0;
        let bottom = -Infinity;
        for (const b of boxes) {
          if (b.top >= bottom - 1) lines += 1;
          bottom = Math.max(bottom, b.bottom);
        }
        return lines;
      });
    expect(lines).toBeLessThanOrEqual(2);
    await page.screenshot({ path: join(ARTIFACTS, 'audit-phone-390x844.png') });
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it("when the audit trail opens, then the collectors' writes are left out until asked for, and times read to the second", async () => {
    const collector = await api<{ meta: { total_count: number } }>('GET', 'audit/?action=record_utilization');
    expect(collector.meta.total_count).toBeGreaterThanOrEqual(4);
    const { page, problems } = await signedIn();
    await visit(page, '#/audit', /^Audit trail$/);
    const actions = () => page.locator('table.audit tbody tr td:nth-child(3)').allTextContents();
    const shown = await actions();
    expect(shown.length).toBeGreaterThan(0);
    expect(shown).not.toContain('record_utilization');
    const times = await page.locator('table.audit tbody tr td.time .when').allTextContents();
    expect(times.every((t) => /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(t))).toBe(true);
    await page.getByLabel(/Include collector writes/).check();
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForFunction(() => location.hash.includes('collector=1'));
    await page.waitForFunction(() =>
      [...document.querySelectorAll('table.audit tbody tr td:nth-child(3)')].some(
        (td) => td.textContent === 'record_utilization',
      ),
    );
    expect(await axeFindings(page)).toEqual([]);
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it('when an account has hours to chart, then the axes read 24-hour UTC times and whole bytes (per hour for transfer); one sample is a sentence', async () => {
    const { page, problems } = await signedIn();
    // The last four hours: an axis of hours (a week's would be of days, dates alone).
    const start = iso(hourNow - 4 * HOUR).replace(/\.\d{3}Z$/, 'Z');
    await visit(page, `#/clusters/1/utilization?start=${start}&account=AUTH_dora`, /^Utilization — default$/);
    await page.waitForFunction(() => document.querySelectorAll('.timechart [data-x-ticks][data-y-ticks]').length === 2);
    const ticks = await page
      .locator('.timechart [data-x-ticks]')
      .evaluateAll((els) =>
        els.map((el) => ({ x: (el as HTMLElement).dataset.xTicks!, y: (el as HTMLElement).dataset.yTicks! })),
      );
    for (const t of ticks) {
      const x = t.x.split('|');
      expect(x[0]).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/);
      for (const label of x) expect(label).toMatch(/^(\d{4}-\d{2}-\d{2} )?\d{2}:\d{2}$|^\d{4}-\d{2}-\d{2}$/);
    }
    const transfer = ticks[1]!.y.split('|');
    expect(transfer.length).toBeGreaterThan(1);
    // 3, 1 and 2 bytes an hour: whole bytes only, per hour.
    for (const label of transfer) expect(label).toMatch(/^\d+ bytes?\/h$/);
    await expect(page.getByRole('img', { name: /^Bytes transferred per hour: chart/ }).count()).resolves.toBe(1);
    await page.screenshot({ path: join(ARTIFACTS, 'utilization-account-1280.png'), fullPage: true });

    // solo was sampled once: a sentence with the one figure, no chart.
    await visit(page, '#/clusters/1/utilization?account=AUTH_solo', /^Utilization — default$/);
    const note = page.locator('.timechart .chart-note').first();
    await note.filter({ hasText: 'gold' }).waitFor();
    await expect(note.textContent()).resolves.toMatch(
      /^One sample so far, at \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC: gold 5 GiB\. A chart needs at least two\.$/,
    );
    expect(await page.locator('.timechart').first().locator('canvas').count()).toBe(0);
    expect(await axeFindings(page)).toEqual([]);
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it('when a browser that takes gzip loads the console, then the API sends the built scripts compressed', async () => {
    const html = await (await fetch(`${stack.apiUrl}/console/`)).text();
    const script = /<script type="module" crossorigin src="([^"]+)"/.exec(html)?.[1];
    expect(script).toMatch(/^\/console\/assets\/index-.*\.js$/);
    const fetchRaw = (encoding: string) =>
      new Promise<{ encoding: string | undefined; vary: string | undefined; body: Buffer }>((resolve, reject) => {
        get(`${stack.apiUrl}${script}`, { headers: { 'Accept-Encoding': encoding } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              encoding: res.headers['content-encoding'],
              vary: res.headers.vary,
              body: Buffer.concat(chunks),
            }),
          );
        }).on('error', reject);
      });
    const plain = await fetchRaw('identity');
    const gzip = await fetchRaw('gzip, deflate');
    expect(plain.encoding).toBeUndefined();
    expect(gzip.encoding).toBe('gzip');
    expect(gzip.vary).toMatch(/Accept-Encoding/i);
    expect(gunzipSync(gzip.body).equals(plain.body)).toBe(true);
    expect(gzip.body.length).toBeLessThan(plain.body.length / 2);
    process.stdout.write(
      `console initial script over the wire: ${plain.body.length} bytes, ${gzip.body.length} gzipped\n`,
    );
  });
});
