import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { createLogger, QuotaReconciler } from '@cairn/management-api';
import { ADMIN_AUTH, ADMIN_AUTH_NAME, ADMIN_KEY, startStack, type Stack } from '../support/stack';
import { startStandInSwift, type StandInSwift } from '../../services/management-api/test/support/stand-in-swift';
import { launch, PageProblems, type Browser } from './chromium';

/**
 * Quotas in the console, in Debian's headless chromium: the user page sets and clears them
 * through the API, shows where Swift stands with them (the quota reconciler applies them to a
 * stand-in Swift 2.30, which takes byte quotas only) and the API's refusals; the users list reads
 * usage against quota; the capacity page sets the quotas against the disks.
 */
const CONSOLE_DIR = join(__dirname, '..', '..', 'packages', 'console', 'dist');
const ARTIFACTS = join(__dirname, 'artifacts');
const TIB = 2 ** 40;
const GIB = 2 ** 30;

describe('quotas in the console', () => {
  let stack: Stack;
  let swift: StandInSwift;
  let reconciler: QuotaReconciler;
  let browser: Browser;
  let aliceId: string;

  const api = async <T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> => {
    const res = await fetch(`${stack.apiUrl}/api/v1/${path}`, {
      method,
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json', Accept: 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
  };
  const userOf = async (id: string) => (await api<Record<string, unknown>>('GET', `users/${id}/`)).body;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    swift = await startStandInSwift({ version: '2.30.1' });
    stack = await startStack({ database: 'postgres', consoleDir: CONSOLE_DIR });
    expect((await api('PATCH', 'clusters/1/', { auth_url: swift.authUrl, storage_url: swift.storageUrl })).status).toBe(
      202,
    );
    // Two devices of 5 TB raw each: 10 TB raw.
    const report = {
      policies: [
        { index: 0, name: 'gold', default: true },
        { index: 1, name: 'Silver' },
      ],
      devices: [
        { node: '10.0.0.1:6200', device: 'sdb1', policies: ['gold'], used_bytes: 1e12, avail_bytes: 4e12 },
        { node: '10.0.0.2:6200', device: 'sdb1', policies: ['Silver'], used_bytes: 2e12, avail_bytes: 3e12 },
      ],
    };
    expect((await api('PUT', 'clusters/1/devices/', report)).status).toBe(204);
    aliceId = (await stack.createUser('alice', 'a-long-password-for-alice')).id;
    await stack.createUser('bob', 'a-long-password-for-bob-x', { quota_bytes: 4 * TIB });
    await stack.createUser('carol', 'a-long-password-for-carol');
    // bob's account holds 1 TiB at the latest sample; carol's 5 GiB, without a quota.
    const sample = {
      interval: 3600,
      sampled_at: new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000).toISOString(),
      samples: [
        { account: 'AUTH_bob', bytes_used: TIB, object_count: 10, container_count: 1, policies: [] },
        { account: 'AUTH_carol', bytes_used: 5 * GIB, object_count: 3, container_count: 1, policies: [] },
      ],
    };
    expect((await api('POST', 'clusters/1/utilization/storage/', sample)).status).toBe(200);
    await stack.createUser('quota-reseller', swift.state.password, { is_superuser: true });
    // What CAIRN_QUOTA_CREDENTIALS starts in the API process.
    reconciler = new QuotaReconciler({
      db: stack.db,
      log: createLogger('silent'),
      credentials: { default: { user: swift.state.user, password: swift.state.password } },
      sessionUrl: stack.databaseUrl,
      resyncMs: 60_000,
      pollMs: 200,
      concurrency: 2,
      timeoutMs: 2000,
    });
    reconciler.start();
    // Once it has read /info, the API refuses what Swift 2.30 cannot enforce.
    for (
      const t0 = Date.now();
      (await api<{ quota_support: unknown }>('GET', 'clusters/1/')).body.quota_support === null;
    ) {
      if (Date.now() - t0 > 10_000) throw new Error('the reconciler did not read /info within 10 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await reconciler?.stop();
    await stack?.close();
    await swift?.close();
  });

  async function openSignedIn(): Promise<{ page: Page; problems: PageProblems }> {
    await browser.context.clearCookies();
    const page = await browser.context.newPage();
    page.setDefaultTimeout(30000);
    const problems = new PageProblems(page);
    await page.goto(`${stack.apiUrl}/console/`);
    await page.getByLabel('Operator name').fill(ADMIN_AUTH_NAME);
    await page.getByLabel('API key').fill(ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    return { page, problems };
  }

  async function visit(page: Page, hash: string, heading: RegExp): Promise<void> {
    await page.evaluate((h) => {
      location.hash = h;
    }, hash);
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
    await page.waitForFunction(() => document.querySelectorAll('.loading, [aria-busy="true"]').length === 0);
  }

  const limitCell = (page: Page, quota: string) => page.locator(`tr[data-quota="${quota}"] td[data-field="limit"]`);

  it('when a byte quota is set on the user page, then it persists, Swift gets it, and clearing it sends null', async () => {
    const { page, problems } = await openSignedIn();
    await visit(page, `#/users/${aliceId}`, /^User alice$/);
    const quotas = page.getByRole('region', { name: 'Quotas of alice' });
    await expect(page.locator('[data-field="quota_status"]').getAttribute('data-status')).resolves.toBe('none');

    await quotas.getByRole('textbox', { name: 'New byte quota', exact: true }).fill('10');
    await quotas.getByRole('combobox', { name: 'Unit of the byte quota', exact: true }).selectOption('GiB');
    const sent = page.waitForRequest((r) => r.method() === 'PATCH' && r.url().endsWith(`/api/v1/users/${aliceId}/`));
    await quotas.getByRole('button', { name: 'Set byte quota', exact: true }).click();
    expect((await sent).postDataJSON()).toEqual({ quota_bytes: 10 * GIB });
    await limitCell(page, 'quota_bytes-all').filter({ hasText: '10 GiB' }).waitFor();
    // The reconciler applies it; the page reads the user again until it says so.
    await page.locator('[data-field="quota_status"][data-status="applied"]').waitFor({ timeout: 20_000 });
    expect(await userOf(aliceId)).toMatchObject({ quota_bytes: 10 * GIB, quota_status: 'applied' });
    expect(Object.fromEntries(swift.state.accounts.get('AUTH_alice') ?? [])).toMatchObject({
      'x-account-meta-quota-bytes': String(10 * GIB),
    });

    await page.reload();
    await page.getByRole('heading', { level: 1, name: /^User alice$/ }).waitFor();
    await limitCell(page, 'quota_bytes-all').filter({ hasText: '10 GiB' }).waitFor();

    // Human units typed in the field win over the picker.
    const typed = page.waitForRequest((r) => r.method() === 'PATCH' && r.url().endsWith(`/api/v1/users/${aliceId}/`));
    await page.getByRole('textbox', { name: 'New byte quota', exact: true }).fill('1.5 TB');
    await page.getByRole('button', { name: 'Set byte quota', exact: true }).click();
    expect((await typed).postDataJSON()).toEqual({ quota_bytes: 1.5e12 });
    await limitCell(page, 'quota_bytes-all').filter({ hasText: '1.36 TiB' }).waitFor();

    const cleared = page.waitForRequest((r) => r.method() === 'PATCH' && r.url().endsWith(`/api/v1/users/${aliceId}/`));
    await page.getByRole('button', { name: 'Clear byte quota', exact: true }).click();
    expect((await cleared).postDataJSON()).toEqual({ quota_bytes: null });
    await limitCell(page, 'quota_bytes-all')
      .filter({ hasText: /^none$/ })
      .waitFor();
    expect(await userOf(aliceId)).toMatchObject({ quota_bytes: null });
    await page.reload();
    await limitCell(page, 'quota_bytes-all')
      .filter({ hasText: /^none$/ })
      .waitFor();
    // Swift's header is removed once the reconciler applies the clearing.
    await page.locator('[data-field="quota_status"][data-status="applied"]').waitFor({ timeout: 20_000 });
    expect(swift.state.accounts.get('AUTH_alice')?.has('x-account-meta-quota-bytes')).toBe(false);
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it("when the API refuses a quota, then the page shows the API's own sentence beside it and nothing changes", async () => {
    const { page, problems } = await openSignedIn();
    await visit(page, `#/users/${aliceId}`, /^User alice$/);
    // The same request straight to the API, for its sentence.
    const refused = await api<{ error: string }>('PATCH', `users/${aliceId}/`, { quota_count: 1000 });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/Swift 2\.30\.1 cannot enforce 'quota_count'/);
    const row = page.locator('tr[data-quota="quota_count-all"]');
    await expect(row.locator('.hint').textContent()).resolves.toBe("This cluster's Swift 2.30.1 cannot enforce it.");
    await row.getByRole('textbox', { name: 'New object quota', exact: true }).fill('1,000');
    await row.getByRole('button', { name: 'Set object quota', exact: true }).click();
    await expect(row.getByRole('alert').textContent()).resolves.toBe(refused.body.error);
    await expect(
      row.getByRole('textbox', { name: 'New object quota', exact: true }).getAttribute('aria-describedby'),
    ).resolves.toBe('quota_count-all-error');
    expect(await userOf(aliceId)).toMatchObject({ quota_count: null });
    // A per-policy byte quota needs Swift 2.32: the policy's row says so too.
    const gold = page.locator('tr[data-quota="quota_bytes_policy-gold"]');
    await gold.getByRole('textbox', { name: 'New byte quota, policy gold', exact: true }).fill('1 TiB');
    await gold.getByRole('button', { name: 'Set byte quota, policy gold', exact: true }).click();
    await expect(gold.getByRole('alert').textContent()).resolves.toMatch(
      /^The cluster's Swift 2\.30\.1 cannot enforce 'quota_bytes_policy'/,
    );
    // A size the console cannot read is refused before anything is sent.
    await page.getByRole('textbox', { name: 'New byte quota', exact: true }).fill('ten GiB');
    await page.getByRole('button', { name: 'Set byte quota', exact: true }).click();
    await expect(page.locator('tr[data-quota="quota_bytes-all"]').getByRole('alert').textContent()).resolves.toMatch(
      /^'ten GiB' is not a size/,
    );
    // The two refusals, and nothing else (the browser logs each refused request as a console error too).
    const seen = problems.take();
    expect(seen.filter((p) => /^HTTP 400: PATCH .*\/api\/v1\/users\//.test(p))).toHaveLength(2);
    expect(
      seen.filter(
        (p) =>
          !/^HTTP 400: PATCH .*\/api\/v1\/users\/|^console: Failed to load resource: the server responded with a status of 400/.test(
            p,
          ),
      ),
    ).toEqual([]);
    await page.close();
  });

  it('when Swift is unreachable, then the user page shows the error with its sentence, and applied once Swift is back', async () => {
    const { page, problems } = await openSignedIn();
    swift.state.down = true;
    try {
      expect((await api('PATCH', `users/${aliceId}/`, { quota_bytes: 5 * GIB })).status).toBe(202);
      await visit(page, `#/users/${aliceId}`, /^User alice$/);
      const status = page.locator('[data-field="quota_status"][data-status="error"]');
      await status.waitFor({ timeout: 20_000 }).catch(async () => {
        await page.reload();
        await status.waitFor({ timeout: 20_000 });
      });
      const error = String((await userOf(aliceId)).quota_error);
      expect(error).toMatch(/unreachable/);
      await expect(status.textContent()).resolves.toContain(error);
      await page.screenshot({ path: join(ARTIFACTS, 'quotas-user-error-1280.png'), fullPage: true });
    } finally {
      swift.state.down = false;
    }
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it('when users have quotas and usage, then the users list shows used against quota with a bar, and used alone without a quota', async () => {
    const { page, problems } = await openSignedIn();
    await visit(page, '#/users?cluster=1&order=user', /^Users$/);
    const bob = page.locator('tr[data-user="bob"] td[data-field="usage"]');
    await expect(bob.textContent()).resolves.toBe('1 TiB / 4 TiB (25.0 %)');
    await expect(bob.getByRole('img').getAttribute('aria-label')).resolves.toBe("bob's byte quota: 25.0 % used");
    expect(Number(await bob.locator('rect.used').getAttribute('width'))).toBe(25);
    const carol = page.locator('tr[data-user="carol"] td[data-field="usage"]');
    await expect(carol.textContent()).resolves.toBe('5 GiB');
    expect(await carol.getByRole('img').count()).toBe(0);
    await expect(page.locator('tr[data-user="quota-reseller"] td[data-field="usage"]').textContent()).resolves.toBe(
      'not sampled',
    );
    await page.screenshot({ path: join(ARTIFACTS, 'quotas-users-1280.png'), fullPage: true });
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it("when the capacity page is opened, then it sets the users' byte quotas against raw and usable capacity", async () => {
    const { page, problems } = await openSignedIn();
    const cluster = (await api<{ quota_bytes_total: number }>('GET', 'clusters/1/')).body;
    // bob's 4 TiB and alice's 5 GiB from the test before.
    expect(cluster.quota_bytes_total).toBe(4 * TIB + 5 * GIB);
    await visit(page, '#/clusters/1/capacity', /^Capacity planning/);
    const section = page.locator('section', { has: page.getByRole('heading', { name: 'Quotas against capacity' }) });
    await expect(section.locator('[data-field="quota_bytes_total"]').textContent()).resolves.toBe('4.00 TiB');
    const raw = 10e12;
    const expected = (copies: number) =>
      `quota ${((4 * TIB + 5 * GIB) / (raw / copies)).toFixed(2)}× usable · ${((4 * TIB + 5 * GIB) / raw).toFixed(2)}× raw`;
    const line = section.locator('[data-field="overcommit"]');
    expect(expected(3)).toBe('quota 1.32× usable · 0.44× raw');
    expect((await line.textContent())?.startsWith(expected(3))).toBe(true);
    await expect(line.getAttribute('class')).resolves.toBe('warning');
    await section.getByLabel('Bytes written per byte stored').fill('1.5');
    await line.filter({ hasText: /^quota 0\.66× usable · 0\.44× raw$/ }).waitFor();
    await expect(section.locator('[data-field="usable"]').textContent()).resolves.toBe('6.06 TiB');
    await section.screenshot({ path: join(ARTIFACTS, 'quotas-capacity-1280.png') });
    expect(problems.take()).toEqual([]);
    await page.close();
  });
});
