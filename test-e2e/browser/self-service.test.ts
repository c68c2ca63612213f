import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN_AUTH, startStack, type Stack } from '../support/stack';
import { formatBytes } from '../../packages/console/src/lib/format';
import { launch, PageProblems, type Browser } from './chromium';
import { axeFindings, storageUserSignedIn } from './console-page';

/**
 * A storage user in the console (Debian's chromium, the management API and the cluster's auth
 * gateway on a real Postgres): signs in with its cluster, name and password, sees My storage (usage
 * against quota with bars, per policy, 30 days as charts and a table), and is signed out at once
 * when an operator disables it; on My keys makes and deletes an S3 key and an access-ruled
 * application credential. Screenshots go to browser/artifacts/.
 */
const CONSOLE_DIR = join(__dirname, '..', '..', 'packages', 'console', 'dist');
const ARTIFACTS = join(__dirname, 'artifacts');
const PW = 'erin-storage-password-0123';
const DAY = 86_400_000;

describe('self-service in the console', () => {
  let stack: Stack;
  let browser: Browser;
  let erin: { id: string };

  const api = async (method: string, path: string, body?: unknown): Promise<void> => {
    const res = await fetch(`${stack.apiUrl}/api/v1/${path}`, {
      method,
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json', Accept: 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  };
  const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const today = Math.floor(Date.now() / DAY) * DAY;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    stack = await startStack({
      database: 'postgres',
      consoleDir: CONSOLE_DIR,
      // My keys: S3 secrets are sealed by the gateway.
      s3SecretKeys: `browser:${randomBytes(32).toString('base64')}`,
    });
    await api('PATCH', 'clusters/1/', { auth_url: `${stack.gatewayUrl}/auth` });
    await api('PUT', 'clusters/1/devices/', {
      policies: [
        { index: 0, name: 'gold', default: true },
        { index: 1, name: 'silver' },
      ],
      devices: [],
    });
    await stack.createUser('frank', PW);
    erin = await stack.createUser('erin', PW, {
      quota_bytes: 10 * 2 ** 30,
      quota_count: 20000,
      quota_bytes_policy: { gold: 8 * 2 ** 30 },
    });
    // Five days of growth, then today's figures; transfer on each of those days.
    for (let d = 5; d >= 0; d--) {
      const bytes = (9 - d) * 2 ** 30;
      await api('POST', 'clusters/1/utilization/storage/', {
        interval: 3600,
        sampled_at: iso(today - d * DAY + 60_000),
        samples: [
          {
            account: 'AUTH_erin',
            bytes_used: bytes,
            object_count: 1000 * (9 - d),
            container_count: 2,
            policies: [
              { index: 0, bytes_used: bytes * 0.75, object_count: 750 * (9 - d), container_count: 1 },
              { index: 1, bytes_used: bytes * 0.25, object_count: 250 * (9 - d), container_count: 1 },
            ],
          },
        ],
      });
    }
    await api('POST', 'clusters/1/utilization/transfer/', {
      batch_id: 'e'.repeat(48),
      covered: { start: iso(today), end: iso(today + 60_000) },
      records: [
        {
          account: 'AUTH_erin',
          policy_index: 0,
          hour: iso(today),
          bytes_in: 3 * 2 ** 30,
          bytes_out: 2 ** 29,
          req_count: 120,
        },
      ],
    });
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('when a storage user signs in, then My storage shows its usage against its quotas and 30 days, nothing secret is readable, and disabling it ends the session', async () => {
    const page = await browser.context.newPage();
    page.setDefaultTimeout(30000);
    const problems = new PageProblems(page);
    await page.goto(`${stack.apiUrl}/console/`);
    await page.getByRole('radio', { name: 'Storage user' }).check();
    expect(await axeFindings(page)).toEqual([]);
    await page.getByLabel('Cluster').fill('default');
    await page.getByLabel('User name').fill('erin');
    await page.getByLabel('Password').fill(PW);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'My storage' }).waitFor();
    await page.waitForFunction(() => document.querySelectorAll('.loading').length === 0);

    const row = (label: string) =>
      page
        .locator('table.standing tr', { has: page.locator('th', { hasText: new RegExp(`^${label}$`) }) })
        .evaluate((el) => [...el.querySelectorAll('td')].map((td) => td.textContent?.trim() ?? ''));
    expect(await row('Bytes')).toEqual([formatBytes(9 * 2 ** 30), formatBytes(10 * 2 ** 30), '']);
    expect(await row('Objects')).toEqual(['9,000', '20,000', '']);
    expect(await row('gold: bytes')).toEqual([formatBytes(9 * 2 ** 30 * 0.75), formatBytes(8 * 2 ** 30), '']);
    expect(await row('silver: bytes')).toEqual([formatBytes(9 * 2 ** 30 * 0.25), 'no quota', '']);
    // A bar for each figure with a quota: bytes 90 % (past the warning line), objects 45 %, gold 84 %.
    const bars = await page
      .locator('table.standing svg.usedbar')
      .evaluateAll((els) => els.map((e) => `${e.getAttribute('aria-label')} ${e.getAttribute('class')}`));
    expect(bars).toEqual([
      'Bytes against its quota: 90.0 % used usedbar warn',
      'Objects against its quota: 45.0 % used usedbar',
      'gold: bytes against its quota: 84.4 % used usedbar warn',
    ]);
    expect(await page.locator('.sampled').textContent()).toMatch(/ago|just now|min/);
    // Two charts drawn (canvas), and their 30 days in the table below, newest first.
    await page.locator('figure.timechart canvas').nth(1).waitFor();
    expect(await page.locator('table.days tbody tr').count()).toBe(30);
    expect(
      await page
        .locator('table.days tbody tr')
        .first()
        .evaluate((el) => el.textContent?.replace(/\s+/g, ' ')),
    ).toBe(
      `${iso(today).slice(0, 10)}${formatBytes(9 * 2 ** 30)}9,000${formatBytes(3 * 2 ** 30)}${formatBytes(2 ** 29)}120`,
    );
    expect(await axeFindings(page)).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, 'self-service-my-storage-1280x800.png') });

    const readable = await page.evaluate(() =>
      JSON.stringify({ session: { ...sessionStorage }, local: { ...localStorage }, cookie: document.cookie }),
    );
    expect(readable).not.toContain(PW);
    expect(readable).not.toContain('cairn_storage_session');
    expect(problems.take()).toEqual([]);

    // An operator disables erin: the next request finds no session, and the page is the sign-in again.
    await api('PATCH', `users/${erin.id}/`, { enabled: false });
    await page.reload();
    await page.getByRole('radio', { name: 'Storage user' }).waitFor();
    expect(await page.getByRole('heading', { level: 1, name: 'My storage' }).count()).toBe(0);
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it('when a storage user makes keys on My keys, then each secret shows once and goes with the page, the access rule is shown before it is sent, and deleting removes the key', async () => {
    const { page, problems } = await storageUserSignedIn(browser, stack.apiUrl, 'frank', PW);
    await page.getByRole('link', { name: 'My keys' }).click();
    await page.getByRole('heading', { level: 1, name: 'My keys' }).waitFor();
    await page.getByText('You have no S3 credentials.').waitFor();
    await page.getByText('You have no application credentials.').waitFor();

    // An S3 key: its secret once, gone after leaving the page; the key stays listed.
    await page.getByRole('button', { name: 'New S3 credential' }).click();
    const shown = page.locator('.shown-once');
    await shown.waitFor();
    const accessKey = (await page
      .locator('p', { hasText: /^Access key / })
      .locator('code')
      .textContent())!.trim();
    expect(accessKey).toMatch(/^[A-Z0-9]{20}$/);
    await page.getByRole('link', { name: 'My storage' }).click();
    await page.getByRole('heading', { level: 1, name: 'My storage' }).waitFor();
    await page.getByRole('link', { name: 'My keys' }).click();
    await page.getByRole('heading', { level: 1, name: 'My keys' }).waitFor();
    await page.getByRole('button', { name: `Delete S3 credential ${accessKey}` }).waitFor();
    expect(await page.locator('.shown-once').count()).toBe(0);

    // An application credential with one rule: the body to send shows the composed Keystone rule.
    await page.getByLabel('Name').fill('photo-sync');
    await page.getByRole('button', { name: 'Add an access rule' }).click();
    const rule = page.getByRole('group', { name: 'Access rule 1' });
    await rule.getByLabel('Container', { exact: true }).fill('photos');
    await rule.getByLabel('Object name prefix (empty: all)').fill('2026/');
    const sent = JSON.parse((await page.getByLabel('What will be sent').textContent())!) as Record<string, unknown>;
    expect(sent).toEqual({
      name: 'photo-sync',
      expires_at: null,
      unrestricted: false,
      access_rules: [{ service: 'object-store', method: 'GET', path: '/v1/AUTH_frank/photos/2026/**' }],
    });
    expect(await axeFindings(page)).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, 'self-service-my-keys-1280x800.png') });
    await page.getByRole('button', { name: 'New application credential' }).click();
    await page.locator('.shown-once', { hasText: 'Secret of photo-sync' }).waitFor();
    await page.getByRole('button', { name: 'Done' }).click();
    const row = page.locator('table.application-credentials tbody tr', { hasText: 'photo-sync' });
    expect(await row.locator('td.wrap').textContent()).toBe('GET /v1/AUTH_frank/photos/2026/**');

    // Deleting both: confirmed, then gone from the lists.
    await page.getByRole('button', { name: `Delete S3 credential ${accessKey}` }).click();
    await page.getByRole('button', { name: 'Delete credential' }).click();
    await page.getByText('You have no S3 credentials.').waitFor();
    await page.getByRole('button', { name: 'Delete application credential photo-sync' }).click();
    await page.getByRole('button', { name: 'Delete credential' }).click();
    await page.getByText('You have no application credentials.').waitFor();
    expect(problems.take()).toEqual([]);
    await page.close();
  });
});
