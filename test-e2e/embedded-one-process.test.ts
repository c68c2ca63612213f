/**
 * @slow: cairn starts racing for one data directory, on PGlite (jest.sequencer.js starts it first)
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cairn, launch, NO_KEEP_ALIVE, startService, type Launched } from './support/processes';
import { migratedDataDir } from './support/data-dir';

/** The refusal's own words: who holds the directory, and what to do instead. */
const REFUSAL =
  /The embedded database in \S+ is in use by process (\d+) \(since [^)]+\), and it admits one process at a time\. Nothing was done\. Stop that process first .*, or, while it runs, do this through its management API/;

/** Well under any timeout the test would hit if the second process waited or worked instead. */
const AT_ONCE_MS = 20_000;

async function api(base: string, auth: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { Authorization: auth, ...NO_KEEP_ALIVE, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, json: (await res.json().catch(() => null)) as Record<string, unknown> | null };
}

async function operatorNames(running: Launched, auth: string): Promise<string[]> {
  const res = await api(running.apiUrl, auth, 'GET', '/api/v1/operators/?limit=0');
  expect(res.status).toBe(200);
  return (res.json!.objects as { name: string }[]).map((o) => o.name).sort();
}

describe('embedded PGlite: one process per data directory', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'cairn-e2e-lock-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('when cairn start runs, then every other process on its data directory is refused at once, and after a SIGKILL the next start takes over', async () => {
    const dataDir = join(root, 'pglite');
    const lockFile = `${dataDir}.lock`;
    const env = { CAIRN_DATA_DIR: await migratedDataDir(dataDir) };
    const first = await launch(env);
    let auth: string;
    try {
      auth = first.adminAuth!;

      // The command of the report: refused, not "created", and nothing of it appears anywhere.
      const began = Date.now();
      const refused = await cairn(['operator', 'create', '--name', 'lockcheck', '--role', 'reader'], env);
      expect(Date.now() - began).toBeLessThan(AT_ONCE_MS);
      expect(refused.code).toBe(1);
      expect(refused.out).toMatch(REFUSAL);
      expect(REFUSAL.exec(refused.out)![1]).toBe(String(first.child.pid));
      expect(refused.out).toContain('POST /api/v1/operators/');
      expect(refused.out).not.toContain('created');
      expect(refused.out).not.toContain('ApiKey lockcheck:');
      expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: first.child.pid });

      // Every other way in is refused alike: the other commands, a second launcher, the API's own
      // server. The commands are tried at once: none of them gets further than the lock.
      const others = [
        ['migrate'],
        ['migrate', '--rollback-all', '--yes-destroy-all-data'],
        ['s3', 'reseal'],
        ['start'],
      ];
      const answers = await Promise.all(
        others.map((args) => cairn(args, { ...env, CAIRN_API_PORT: '0', CAIRN_GATEWAY_PORT: '0' })),
      );
      for (const [i, args] of others.entries()) {
        expect({ args, code: answers[i]!.code }).toEqual({ args, code: 1 });
        expect(answers[i]!.out).toMatch(REFUSAL);
      }
      await expect(startService('management-api', env, AT_ONCE_MS)).rejects.toThrow(REFUSAL);

      // The running server is untouched and keeps working; what it acknowledges is what it keeps.
      const made = await api(first.apiUrl, auth, 'POST', '/api/v1/operators/', { name: 'viaapi', role: 'reader' });
      expect(made.status).toBe(201);
      expect(await operatorNames(first, auth)).toEqual(['admin', 'viaapi']);
    } finally {
      first.child.kill('SIGKILL');
      await new Promise((r) =>
        first.child.exitCode === null && first.child.signalCode === null ? first.child.once('exit', r) : r(null),
      );
    }

    // Killed, it could not remove its lock: the next start finds its holder gone and takes over.
    expect(existsSync(lockFile)).toBe(true);
    const second = await launch(env);
    try {
      expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: second.child.pid });
      expect(await operatorNames(second, auth)).toEqual(['admin', 'viaapi']);
      // Its banner does not send anyone to a command that would be refused while it runs.
      expect(second.output()).toContain(
        "(The admin key was printed at the first start; with Cairn stopped, 'pnpm cairn operator create --name <name> --role admin' makes another.)",
      );
    } finally {
      expect(await second.stop()).toBe(0);
    }
    // Stopped, it gives the directory back: the command works now, and the next start sees its operator.
    expect(existsSync(lockFile)).toBe(false);
    const created = await cairn(['operator', 'create', '--name', 'lockcheck', '--role', 'reader'], env);
    expect(created.code).toBe(0);
    expect(created.out).toContain("Operator 'lockcheck' (reader) created.");
    expect(existsSync(lockFile)).toBe(false);
    const third = await launch(env);
    try {
      expect(await operatorNames(third, auth)).toEqual(['admin', 'lockcheck', 'viaapi']);
    } finally {
      expect(await third.stop()).toBe(0);
    }
  });

  it('when two starts race on a new data directory, then exactly one runs and the other is refused', async () => {
    const env = { CAIRN_DATA_DIR: join(root, 'race') };
    const [a, b] = await Promise.allSettled([launch(env), launch(env)]);
    const running = [a, b].flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const refused = [a, b].flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));
    try {
      expect(running).toHaveLength(1);
      expect(refused).toHaveLength(1);
      expect(refused[0]).toMatch(REFUSAL);
      expect(await operatorNames(running[0]!, running[0]!.adminAuth!)).toEqual(['admin']);
    } finally {
      for (const r of running) expect(await r.stop()).toBe(0);
    }
  });
});
