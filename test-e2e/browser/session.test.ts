import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { ADMIN_AUTH, startStack, type Stack } from '../support/stack';
import { launch, PageProblems, type Browser } from './chromium';

/**
 * The console's session in chromium: the key is traded for an HttpOnly, SameSite=Strict cookie
 * and kept nowhere a script could read it; the session survives a reload and ends on sign-out,
 * when its key is revoked (by another admin, through the API), and after the idle timeout
 * (3 seconds here); a form on another site cannot make the API write with it; minting an API key
 * asks for the key again first.
 */
const CONSOLE_DIR = join(__dirname, '..', '..', 'packages', 'console', 'dist');
const IDLE_SECONDS = 3;
const COOKIE = 'cairn_console_session';

describe('console sessions in chromium', () => {
  let stack: Stack;
  let browser: Browser;
  let attacker: Server;
  let attackerUrl: string;

  const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${stack.apiUrl}/api/v1/${path}`, {
      method,
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json', Accept: 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (res.status === 204 ? undefined : await res.json()) as T;
  };

  /** A new admin operator, signed in by key in a fresh page. */
  async function signedIn(name: string): Promise<{ page: Page; problems: PageProblems; key: string; keyUri: string }> {
    const created = await api<{ api_key: string; id: number }>('POST', 'operators/', {
      name,
      role: 'admin',
      clusters: [],
    });
    await browser.context.clearCookies();
    const page = await browser.context.newPage();
    page.setDefaultTimeout(30000);
    const problems = new PageProblems(page);
    await page.goto(`${stack.apiUrl}/console/`);
    await page.getByLabel('Operator name').fill(name);
    await page.getByLabel('API key').fill(created.api_key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    const keys = await api<{ objects: Array<{ resource_uri: string }> }>('GET', `operators/${created.id}/keys/`);
    return { page, problems, key: created.api_key, keyUri: keys.objects[0]!.resource_uri };
  }

  /** Everything a script on the console's page can read that might hold a secret. */
  const readableStorage = (page: Page) =>
    page.evaluate(async () => {
      const databases = 'databases' in indexedDB ? await indexedDB.databases() : [];
      return JSON.stringify({
        session: { ...sessionStorage },
        local: { ...localStorage },
        cookie: document.cookie,
        indexedDB: databases,
      });
    });

  const go = (page: Page, hash: string) =>
    page.evaluate((h) => {
      location.hash = h;
    }, hash);

  beforeAll(async () => {
    stack = await startStack({
      database: 'postgres',
      consoleDir: CONSOLE_DIR,
      consoleSessions: { idleSeconds: IDLE_SECONDS, maxSeconds: 3600 },
    });
    browser = await launch();
    // Another site (localhost is not the same site as 127.0.0.1): a page whose form posts to the API.
    attacker = createServer((_req, res) => {
      res.setHeader('Content-Type', 'text/html');
      res.end(
        `<!doctype html><form method="post" action="${stack.apiUrl}/api/v1/operators/"><input name="name" value="planted"><input name="role" value="admin"></form><script>document.forms[0].submit()</script>`,
      );
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', () => resolve()));
    const address = attacker.address();
    attackerUrl = `http://localhost:${typeof address === 'object' && address ? address.port : 0}/`;
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (attacker ? attacker.close(() => resolve()) : resolve()));
    await stack?.close();
  });

  it('when an operator signs in, then no storage a script can read holds the key, the cookie is HttpOnly and SameSite=Strict, a reload keeps the session and sign-out ends it', async () => {
    const { page, problems, key } = await signedIn('session-keeper');
    expect(await readableStorage(page)).not.toContain(key);
    expect(await page.evaluate(() => document.cookie)).toBe('');
    const cookies = (await browser.context.cookies(stack.apiUrl)).filter((c) => c.name === COOKIE);
    expect(cookies).toEqual([
      expect.objectContaining({ httpOnly: true, sameSite: 'Strict', path: '/', secure: false, expires: -1 }),
    ]);
    expect(cookies[0]!.value).not.toContain(key);
    await page.reload();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    await expect(page.locator('.who').textContent()).resolves.toMatch(/session-keeper/);
    expect(await readableStorage(page)).not.toContain(key);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    // The old cookie value no longer opens anything, even if someone had kept it.
    const stale = await fetch(`${stack.apiUrl}/api/v1/whoami/`, {
      headers: { Cookie: `${COOKIE}=${cookies[0]!.value}` },
    });
    expect(stale.status).toBe(401);
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(problems.urls.filter((u) => u.includes(key))).toEqual([]);
    expect(problems.take()).toEqual([]);
    await page.close();
  });

  it('when another admin revokes the key through the API, then the console session ends at once', async () => {
    const { page, keyUri } = await signedIn('session-revoked');
    await go(page, '#/users');
    await page.getByRole('heading', { level: 1, name: 'Users' }).waitFor();
    await api('DELETE', keyUri.replace('/api/v1/', ''));
    await go(page, '#/clusters');
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await expect(page.getByRole('status').first().textContent()).resolves.toMatch(/session has ended/);
    await page.close();
  });

  it(`when the console is left idle past the idle timeout (${IDLE_SECONDS} s here), then the session ends`, async () => {
    const { page } = await signedIn('session-idle');
    await go(page, '#/users');
    await page.getByRole('heading', { level: 1, name: 'Users' }).waitFor();
    await page.waitForTimeout((IDLE_SECONDS + 1.5) * 1000);
    await go(page, '#/clusters');
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await expect(page.getByRole('status').first().textContent()).resolves.toMatch(/session has ended/);
    await page.close();
  });

  it('when an operator adds an API key from the console, then the key is asked for first; cancelling makes nothing, confirming makes the key', async () => {
    const name = 'session-stepup';
    const { page, problems, key } = await signedIn(name);
    const me = await api<{ objects: Array<{ id: number }> }>('GET', `operators/?name=${name}`);
    const keysPath = `operators/${me.objects[0]!.id}/keys/`;
    const keyCount = async () => (await api<{ meta: { total_count: number } }>('GET', keysPath)).meta.total_count;
    await go(page, '#/operators');
    await page.getByRole('heading', { level: 1, name: 'Operators' }).waitFor();
    const addKey = page.getByRole('button', { name: `Add key for ${name}` });
    const dialog = page.getByRole('dialog', { name: 'Confirm with your API key' });

    await addKey.click();
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByText('Cancelled: nothing was changed.').waitFor();
    expect(await keyCount()).toBe(1);
    // Escape cancels too.
    await addKey.click();
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect(await keyCount()).toBe(1);

    // A wrong key is refused in the dialog, which stays open; the right one makes the key.
    await addKey.click();
    await dialog.getByLabel('API key').fill('not-the-key-0123456789abcdefghijklmnopqrstuvwxyz');
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await expect(dialog.getByRole('alert').textContent()).resolves.toMatch(/not an API key of operator/);
    expect(await keyCount()).toBe(1);
    await dialog.getByLabel('API key').fill(key);
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await dialog.waitFor({ state: 'detached' });
    const shown = (await page.locator('.shown-once code').textContent())!;
    expect(shown).toMatch(new RegExp(`^${name}:\\S{20,}$`));
    const whoami = await fetch(`${stack.apiUrl}/api/v1/whoami/`, { headers: { Authorization: `ApiKey ${shown}` } });
    expect(whoami.status).toBe(200);
    expect(await keyCount()).toBe(2);
    // For a few minutes the session needs no second confirmation.
    await page.getByRole('button', { name: 'Done' }).click();
    await addKey.click();
    await page.locator('.shown-once code').waitFor();
    expect(await dialog.count()).toBe(0);
    expect(await keyCount()).toBe(3);

    expect(await readableStorage(page)).not.toContain(key);
    expect(problems.urls.filter((u) => u.includes(key))).toEqual([]);
    // The only refusals were the API asking for the key, and the wrong key.
    expect(problems.take().filter((p) => !/\b403\b/.test(p))).toEqual([]);
    const stepUps = await api<{ meta: { total_count: number } }>('GET', `audit/?action=step_up&operator=${name}`);
    expect(stepUps.meta.total_count).toBe(1);
    await page.close();
  });

  it('when a page on another site posts a form to the API, then it is refused and nothing is written; a same-origin write without the CSRF header is refused too', async () => {
    const { page } = await signedIn('session-csrf');
    const attack = await browser.context.newPage();
    const answer = attack.waitForResponse(
      (r) => r.url() === `${stack.apiUrl}/api/v1/operators/` && r.request().method() === 'POST',
    );
    await attack.goto(attackerUrl);
    const res = await answer;
    // SameSite=Strict: the browser did not even send the cookie.
    expect(await res.request().headerValue('cookie')).toBeNull();
    expect(res.status()).toBe(401);
    const planted = await api<{ meta: { total_count: number } }>('GET', 'operators/?name=planted');
    expect(planted.meta.total_count).toBe(0);
    await attack.close();
    // The second defence: a write that does carry the cookie still needs the session's token.
    const status = await page.evaluate(async () => {
      const r = await fetch('/api/v1/operators/', {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'planted', role: 'admin', clusters: [] }),
      });
      return r.status;
    });
    expect(status).toBe(403);
    expect((await api<{ meta: { total_count: number } }>('GET', 'operators/?name=planted')).meta.total_count).toBe(0);
    await page.close();
  });
});
