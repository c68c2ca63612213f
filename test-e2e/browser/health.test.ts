import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ClusterHealthResource } from '@cairn/contract';
import type { Page } from 'playwright-core';
import { ADMIN_AUTH, startStack, type Stack } from '../support/stack';
import { RING, TB, healthyNode } from '../../services/management-api/test/support/health-rounds';
import { formatBytes } from '../../packages/console/src/lib/format';
import { launch, type Browser } from './chromium';
import { axeFindings, signedIn, visit } from './console-page';

/**
 * Cluster health in the console (Debian's chromium against the management API on a real Postgres):
 * rounds posted through the API's own endpoint, as `cairn health collect` posts them, and the
 * health page and the clusters list read them. Screenshots go to browser/artifacts/.
 */
const CONSOLE_DIR = join(__dirname, '..', '..', 'packages', 'console', 'dist');
const ARTIFACTS = join(__dirname, 'artifacts');
const WIDE = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

describe('cluster health in the console', () => {
  let stack: Stack;
  let browser: Browser;
  let clusterName: string;

  const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${stack.apiUrl}/api/v1/${path}`, {
      method,
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json', Accept: 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const postRound = (at: Date, nodes: unknown[]) =>
    api<{ open_findings: number }>('POST', 'clusters/1/health/rounds/', {
      collected_at: at.toISOString(),
      ring_md5: RING,
      nodes,
    });
  const text = (page: Page, selector: string) =>
    page.locator(selector).evaluate((el) => (el.textContent ?? '').replace(/\s+/g, ' ').trim());
  const healthPage = (page: Page) => visit(page, '#/clusters/1/health', /^Health — /);
  /** The cluster's badge on the clusters list, once it reads `expected` (the list is read afresh on each visit). */
  const clustersBadge = async (page: Page, expected: string) => {
    await visit(page, '#/clusters', /^Clusters$/);
    const badge = page.locator('section.card', { hasText: clusterName }).locator('dd[data-field="health"] .badge');
    await badge.filter({ hasText: new RegExp(`^${expected}$`) }).waitFor({ timeout: 10_000 });
    return (await badge.textContent())?.trim();
  };

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    stack = await startStack({ database: 'postgres', consoleDir: CONSOLE_DIR });
    clusterName = (await api<{ name: string }>('GET', 'clusters/1/')).name;
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('when a round finds an unmounted drive and a silent node and a later round is clean, then the health page and the clusters list show the findings, then none', async () => {
    const { page, problems } = await signedIn(browser, stack.apiUrl);

    // Before any round: the page says so, and how to start the collector.
    await healthPage(page);
    expect(await text(page, '.health-status')).toMatch(/^no health round yet No health round has been posted/);
    expect(await text(page, '.health-status')).toContain('cairn health collect');
    expect(await clustersBadge(page, 'no health round yet')).toBe('no health round yet');

    const first = new Date(Date.now() - 2 * 60_000);
    const unmounted = healthyNode('10.0.0.1:6200', first, {
      diskusage: [
        { device: 'sdb1', mounted: true, size: 4 * TB, used: 1 * TB, avail: 3 * TB },
        { device: 'sdc1', mounted: false, size: '', used: '', avail: '' },
      ],
      unmounted: [{ device: 'sdc1', mounted: false }],
    });
    const silent = healthyNode('10.0.0.2:6200', first, {}, { answered: false, error: 'connection refused', recon: {} });
    expect((await postRound(first, [unmounted, silent])).open_findings).toBe(2);
    const health = await api<ClusterHealthResource>('GET', 'clusters/1/health/');
    expect(health.findings.map((f) => `${f.severity} ${f.code} ${f.node} ${f.device ?? '-'}`).sort()).toEqual([
      'critical node_silent 10.0.0.2:6200 -',
      'warning drive_unmounted 10.0.0.1:6200 sdc1',
    ]);
    const sentenceOf = (code: string) => health.findings.find((f) => f.code === code)!.sentence;

    await healthPage(page);
    expect(await page.title()).toBe(`Health — ${clusterName} · Cairn console`);
    expect(await text(page, '.health-status')).toMatch(/^critical 1 critical, 1 warning; latest round /);
    // The findings with the API's sentences, critical first.
    const findings = await page
      .locator('ul.findings > li')
      .evaluateAll((lis) =>
        lis.map((li) => [li.querySelector('.badge')?.textContent, li.querySelector('.sentence')?.textContent]),
      );
    expect(findings).toEqual([
      ['critical', sentenceOf('node_silent')],
      ['warning', sentenceOf('drive_unmounted')],
    ]);
    // Per node: whether it answered, its devices' fill and mount state, its last replication passes.
    const row = (node: string, field: string) => text(page, `tr[data-node="${node}"] td[data-field="${field}"]`);
    expect(await row('10.0.0.1:6200', 'answered')).toBe('yes');
    expect(await row('10.0.0.1:6200', 'devices')).toBe(`sdb1: 25.0 % of ${formatBytes(4 * TB)}sdc1: unmounted`);
    const passes = await row('10.0.0.1:6200', 'replication');
    expect(passes).toMatch(/^account: \d{4}-\d\d-\d\d \d\d:\d\d \(\d+ min ago\)container: .+object: .+$/);
    expect(await row('10.0.0.2:6200', 'answered')).toBe('no — last seen never (connection refused)');
    expect(await row('10.0.0.2:6200', 'devices')).toBe('—');
    expect(await row('10.0.0.2:6200', 'replication')).toBe('—');
    expect(await axeFindings(page)).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, 'health-1280x800.png'), fullPage: true });

    // At phone width: no sideways scrolling of the page, the node column and the sentences in view.
    await page.setViewportSize(PHONE);
    const inView = (selector: string) =>
      page
        .locator(selector)
        .first()
        .evaluate((el) => {
          const r = el.getBoundingClientRect();
          return r.left >= 0 && r.right <= 390 && r.width > 0;
        });
    expect(await inView('tr[data-node="10.0.0.1:6200"] th')).toBe(true);
    expect(await inView('ul.findings .sentence')).toBe(true);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
    await page.screenshot({ path: join(ARTIFACTS, 'health-390x844.png'), fullPage: true });
    await page.setViewportSize(WIDE);

    expect(await clustersBadge(page, 'critical')).toBe('critical');
    expect(await axeFindings(page)).toEqual([]);

    // A clean round: the findings close, and both pages say ok.
    const second = new Date(Date.now() - 60_000);
    expect(
      (await postRound(second, [healthyNode('10.0.0.1:6200', second), healthyNode('10.0.0.2:6200', second)]))
        .open_findings,
    ).toBe(0);
    await healthPage(page);
    expect(await text(page, '.health-status')).toMatch(/^ok no open findings; latest round /);
    expect(await page.locator('ul.findings').count()).toBe(0);
    expect(await text(page, 'main')).not.toContain(sentenceOf('drive_unmounted'));
    expect(await row('10.0.0.2:6200', 'answered')).toBe('yes');
    expect(await clustersBadge(page, 'ok')).toBe('ok');
    expect(await axeFindings(page)).toEqual([]);
    expect(problems.take()).toEqual([]);
    await page.close();
  });
});
