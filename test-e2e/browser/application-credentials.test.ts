import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ApplicationCredentialResource } from '@cairn/contract';
import type { Page } from 'playwright-core';
import { ADMIN_AUTH, ADMIN_AUTH_NAME, ADMIN_KEY, startStack, type Stack } from '../support/stack';
import { launch, PageProblems, type Browser } from './chromium';

/**
 * A storage user's application credentials in the console (Debian's chromium, the management API
 * and the auth gateway on a real Postgres): alice makes credentials through the gateway's Keystone
 * API with her own token, the console lists them as the API has them, and revoking one there makes
 * the gateway refuse logins with it. Screenshots go to browser/artifacts/.
 */
const CONSOLE_DIR = join(__dirname, '..', '..', 'packages', 'console', 'dist');
const ARTIFACTS = join(__dirname, 'artifacts');
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const ALICE_PW = 'a-long-password-for-alice';

interface Made {
  id: string;
  name: string;
  secret: string;
}

describe('application credentials in the console', () => {
  let stack: Stack;
  let browser: Browser;
  let aliceId: string;
  let gw: string;

  const api = async <T>(method: string, path: string, auth = ADMIN_AUTH, body?: unknown): Promise<T> => {
    const res = await fetch(`${stack.apiUrl}/api/v1/${path}`, {
      method,
      headers: { Authorization: auth, Accept: 'application/json', 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (res.status === 204 ? undefined : await res.json()) as T;
  };

  /** A V3 login at the gateway; the answer's status and token. */
  const login = async (identity: object): Promise<{ status: number; token: string | null }> => {
    const res = await fetch(`${gw}/v3/auth/tokens`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ auth: { identity } }),
    });
    await res.arrayBuffer();
    return { status: res.status, token: res.headers.get('x-subject-token') };
  };
  const appCredLogin = (c: Made) =>
    login({ methods: ['application_credential'], application_credential: { id: c.id, secret: c.secret } });

  /** What alice's `openstack application credential create` posts, with her own password token. */
  const make = async (body: Record<string, unknown>): Promise<Made> => {
    const { token } = await login({
      methods: ['password'],
      password: { user: { name: 'alice', domain: { id: 'default' }, password: ALICE_PW } },
    });
    const res = await fetch(`${gw}/v3/users/alice/application_credentials`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Auth-Token': token! },
      body: JSON.stringify({ application_credential: body }),
    });
    if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { application_credential: Made }).application_credential;
  };

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    stack = await startStack({ database: 'postgres', consoleDir: CONSOLE_DIR });
    gw = `${stack.gatewayUrl}/auth`;
    aliceId = (await stack.createUser('alice', ALICE_PW)).id;
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  async function signedInPage(
    name = ADMIN_AUTH_NAME,
    key = ADMIN_KEY,
  ): Promise<{ page: Page; problems: PageProblems }> {
    await browser.context.clearCookies();
    const page = await browser.context.newPage();
    page.setDefaultTimeout(30000);
    const problems = new PageProblems(page);
    await page.goto(`${stack.apiUrl}/console/`);
    await page.getByLabel('Operator name').fill(name);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    return { page, problems };
  }

  async function axeFindings(page: Page): Promise<string[]> {
    await page.evaluate(AXE);
    const violations = await page.evaluate(async () => {
      const axe = (
        window as unknown as {
          axe: {
            run: (
              c: unknown,
              o: unknown,
            ) => Promise<{
              violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: unknown }> }>;
            }>;
          };
        }
      ).axe;
      const r = await axe.run(document, { resultTypes: ['violations'] });
      return r.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        targets: v.nodes.slice(0, 3).map((n) => JSON.stringify(n.target)),
      }));
    });
    return violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.impact} ${v.id}: ${v.help} ${v.targets.join(' ')}`);
  }

  /** The cells of the credential's row, as the page shows them (header cell first). */
  const rowCells = (page: Page, id: string) =>
    page
      .locator(`tr[data-credential="${id}"]`)
      .evaluate((tr) =>
        [...tr.querySelectorAll('th, td')].map((c) => (c.textContent ?? '').replace(/\s+/g, ' ').trim()),
      );

  it("when alice made credentials through the gateway and an admin revokes one in the console, then the list showed them as made and the gateway refuses the revoked one's login with 401", async () => {
    const expires = new Date(Date.now() + 3 * 86_400_000 + 3_600_000).toISOString();
    const reader = await make({
      name: 'backup-reader',
      description: 'nightly restore check',
      expires_at: expires,
      access_rules: [{ service: 'object-store', method: 'GET', path: '/v1/AUTH_alice/backups/**' }],
    });
    const ci = await make({ name: 'ci-uploader', unrestricted: true });
    // Both work before anything is revoked, so the refusal below is the revocation's doing.
    expect((await appCredLogin(reader)).status).toBe(201);
    expect((await appCredLogin(ci)).status).toBe(201);
    const tokenBefore = (await appCredLogin(reader)).token!;

    const { page, problems } = await signedInPage();
    await page.evaluate((h) => (location.hash = h), `#/users/${aliceId}`);
    await page.getByRole('heading', { level: 1, name: 'User alice' }).waitFor();
    await page.getByRole('link', { name: 'Application credentials' }).click();
    await page.getByRole('heading', { level: 1, name: 'Application credentials of alice' }).waitFor();
    await page.locator(`tr[data-credential="${reader.id}"]`).waitFor();
    expect(await page.title()).toBe('Application credentials of alice · Cairn console');

    // Each row is the API's record, field by field.
    const listed = await api<{ objects: ApplicationCredentialResource[] }>(
      'GET',
      `application_credentials/?user=${aliceId}`,
    );
    const apiReader = listed.objects.find((o) => o.id === reader.id)!;
    expect(apiReader).toMatchObject({
      name: 'backup-reader',
      description: 'nightly restore check',
      roles: ['swiftoperator'],
      unrestricted: false,
      expires_at: expires,
    });
    const readerCells = await rowCells(page, reader.id);
    expect(readerCells.slice(0, 6)).toEqual([
      'backup-reader',
      'nightly restore check',
      reader.id,
      'swiftoperator',
      'no',
      'GET /v1/AUTH_alice/backups/**',
    ]);
    expect(readerCells[6]).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} \(in 3 days\)$/);
    expect(readerCells[7]).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} \(just now\)$/);
    expect((await rowCells(page, ci.id)).slice(0, 7)).toEqual([
      'ci-uploader',
      '—',
      ci.id,
      'swiftoperator',
      'yes',
      'whole account',
      'never',
    ]);
    // The secrets never reach the console.
    const text = await page.evaluate(() => document.body.textContent ?? '');
    expect(text).not.toContain(reader.secret);
    expect(text).not.toContain(ci.secret);
    expect(await axeFindings(page)).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, 'application-credentials-1280x800.png') });
    // At phone width the page itself never scrolls sideways: the table scrolls in its own box.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: join(ARTIFACTS, 'application-credentials-390x844.png') });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1280, height: 800 });

    // Revoke: a confirmation first; Cancel keeps it.
    await page.getByRole('button', { name: 'Revoke application credential backup-reader' }).click();
    let confirm = page.getByRole('alertdialog', { name: 'Revoke application credential backup-reader?' });
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    expect((await appCredLogin(reader)).status).toBe(201);
    await page.getByRole('button', { name: 'Revoke application credential backup-reader' }).click();
    confirm = page.getByRole('alertdialog', { name: 'Revoke application credential backup-reader?' });
    await page.screenshot({ path: join(ARTIFACTS, 'application-credentials-revoke-1280x800.png') });
    await confirm.getByRole('button', { name: 'Revoke credential' }).click();
    await page.locator(`tr[data-credential="${reader.id}"]`).waitFor({ state: 'detached' });

    expect((await appCredLogin(reader)).status).toBe(401);
    expect((await appCredLogin(ci)).status).toBe(201);
    // A token it gave before stops validating too (each validation checks the credential's row).
    const validates = async () =>
      (
        await fetch(`${gw}/v3/auth/tokens`, {
          headers: { 'X-Auth-Token': tokenBefore, 'X-Subject-Token': tokenBefore },
        })
      ).status;
    const deadline = Date.now() + 5000;
    while ((await validates()) === 200 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await validates()).not.toBe(200);
    expect(
      (
        await api<{ objects: ApplicationCredentialResource[] }>('GET', `application_credentials/?user=${aliceId}`)
      ).objects.map((o) => o.name),
    ).toEqual(['ci-uploader']);
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it('when a reader opens the page, then it lists the credentials with no way to revoke one', async () => {
    const kept = await make({ name: 'reader-sees-this' });
    const { api_key: readerKey } = await api<{ api_key: string }>('POST', 'operators/', ADMIN_AUTH, {
      name: 'watcher',
      role: 'reader',
      clusters: [],
    });
    const { page, problems } = await signedInPage('watcher', readerKey);
    await page.evaluate((h) => (location.hash = h), `#/users/${aliceId}/application-credentials`);
    await page.getByRole('heading', { level: 1, name: 'Application credentials of alice' }).waitFor();
    await page.locator(`tr[data-credential="${kept.id}"]`).waitFor();
    expect(await page.getByRole('button', { name: /Revoke/ }).count()).toBe(0);
    expect(problems.take()).toEqual([]);
    await page.close();
  });
});
