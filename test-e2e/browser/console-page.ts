import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { ADMIN_AUTH_NAME, ADMIN_KEY } from '../support/stack';
import { PageProblems, type Browser } from './chromium';

/** The steps every console page test takes: sign in, go to a page, ask axe-core. */

const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/**
 * A new tab on the console's sign-in form at `apiUrl`, with its problems recorded. Signed out
 * first: the session cookie is the browser's, and a signed-in console skips the form.
 */
async function signInForm(browser: Browser, apiUrl: string): Promise<{ page: Page; problems: PageProblems }> {
  await browser.context.clearCookies();
  const page = await browser.context.newPage();
  page.setDefaultTimeout(30000);
  const problems = new PageProblems(page);
  await page.goto(`${apiUrl}/console/`);
  return { page, problems };
}

/** A new tab signed in to the console at `apiUrl` (as the stack's admin unless told), with its problems recorded. */
export async function signedIn(
  browser: Browser,
  apiUrl: string,
  name = ADMIN_AUTH_NAME,
  key = ADMIN_KEY,
): Promise<{ page: Page; problems: PageProblems }> {
  const { page, problems } = await signInForm(browser, apiUrl);
  await page.getByLabel('Operator name').fill(name);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
  return { page, problems };
}

/** A new tab signed in to the console at `apiUrl` as a storage user, on My storage, with its problems recorded. */
export async function storageUserSignedIn(
  browser: Browser,
  apiUrl: string,
  user: string,
  password: string,
  cluster = 'default',
): Promise<{ page: Page; problems: PageProblems }> {
  const { page, problems } = await signInForm(browser, apiUrl);
  await page.getByRole('radio', { name: 'Storage user' }).check();
  await page.getByLabel('Cluster').fill(cluster);
  await page.getByLabel('User name').fill(user);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'My storage' }).waitFor();
  return { page, problems };
}

/** Goes to `hash` and waits for its heading and for nothing to be loading. */
export async function visit(page: Page, hash: string, heading: RegExp): Promise<void> {
  await page.evaluate((h) => {
    location.hash = h;
  }, hash);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  await page.waitForFunction(() => document.querySelectorAll('.loading, [aria-busy="true"]').length === 0);
}

/** axe-core's serious and critical findings on the page as it is, one line each. */
export async function axeFindings(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE);
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
