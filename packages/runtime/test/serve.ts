import type { Express } from 'express';
import { listen } from '../src';

/** Serves `app` on a free port of 127.0.0.1 for one test file; returns its base URL and a closer. */
export async function serve(app: Express): Promise<{ url: string; close: () => Promise<void> }> {
  const { server, port } = await listen(app, 0, '127.0.0.1');
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** The value of one sample line (`name{labels} value`) in a Prometheus text page, or undefined. */
export function sample(page: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of page.split('\n')) {
    if (!line.startsWith(`${name}{`) && line.split(' ')[0] !== name) continue;
    const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
    const open = line.indexOf('{');
    const have = open >= 0 ? line.slice(open + 1, line.lastIndexOf('}')).split(/,(?=[a-zA-Z_]+=")/) : [];
    if (want.every((w) => have.includes(w))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}
