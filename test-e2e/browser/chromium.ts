import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's browser; playwright-core never downloads one. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  context: BrowserContext;
  close: () => Promise<void>;
}

/** A fresh profile in a temporary directory, removed on close. */
export async function launch(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'cairn-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1280, height: 800 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Everything that went wrong in a page: console errors, uncaught exceptions, failed or refused requests. */
export class PageProblems {
  readonly problems: string[] = [];
  readonly urls: string[] = [];

  constructor(page: Page) {
    page.on('console', (m) => {
      if (m.type() === 'error') this.problems.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => this.problems.push(`exception: ${e.message}`));
    // A request still in flight when the test reloads or leaves the page fails as net::ERR_ABORTED.
    // The console never aborts a request of its own, so such a failure is the test's navigation,
    // not the console's; every other failure (refused, reset, blocked) is a problem.
    page.on('requestfailed', (r) => {
      const reason = r.failure()?.errorText ?? '';
      if (reason !== 'net::ERR_ABORTED') this.problems.push(`request failed: ${r.method()} ${r.url()} ${reason}`);
    });
    page.on('request', (r) => this.urls.push(r.url()));
    page.on('response', (r) => {
      if (r.status() >= 400) this.problems.push(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`);
    });
  }

  take(): string[] {
    return this.problems.splice(0);
  }
}
