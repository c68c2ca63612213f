import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isCairnError } from '@cairn/domain';
import {
  ADMIN,
  ADMIN_AUTH,
  createCluster,
  startTestApp,
  type TestApp,
} from '../../../services/management-api/test/support/harness';
import { pullOnce } from '../src/rings/pull';

/**
 * `cairn rings pull` against the real management API on Postgres, with rings written by Swift's
 * swift-ring-builder (packages/swift-cluster/test/fixtures/make-rings.sh): object (part power 8,
 * 127.0.0.1:6200 sdb1..sdb3), object-1 (part power 8, sdb2..sdb4: shares two devices with object),
 * account (127.0.0.1:6202: no device in common with object), object-2 (part power 10).
 */
const FIXTURES = join(__dirname, '../../swift-cluster/test/fixtures/swift');
const ring = (name: string): Buffer => readFileSync(join(FIXTURES, `${name}.ring.gz`));
const REPO_ROOT = join(__dirname, '../../..');
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

describe('cairn rings pull', () => {
  let app: TestApp;
  let east: number;
  let west: number;
  let wide: number;
  let dir: string;
  const target = () => ({ apiUrl: app.baseUrl, apiKey: `${ADMIN.name}:${ADMIN.key}` });
  const push = async (clusterId: number, bytes: Buffer, name = 'object') => {
    const res = await app
      .http()
      .post(`/api/v1/clusters/${clusterId}/rings/${name}/`)
      .set('Authorization', ADMIN_AUTH)
      .set('Content-Type', 'application/octet-stream')
      .send(bytes);
    if (res.status !== 201) throw new Error(`push: ${res.status} ${res.text}`);
  };
  const installed = () => join(dir, 'object.ring.gz');
  const leftovers = () => readdirSync(dir).filter((f) => f.endsWith('.tmp'));

  beforeAll(async () => {
    app = await startTestApp('postgres');
    east = (await createCluster(app, 'pull-east')).id as number;
    west = (await createCluster(app, 'pull-west')).id as number;
    wide = (await createCluster(app, 'pull-wide')).id as number;
    await push(east, ring('object'));
    // Another cluster's object ring: other devices (the account ring's), same part power.
    await push(west, ring('account'));
    // Same devices as object-2's cluster, another part power.
    await push(wide, ring('object-2'));
    dir = mkdtempSync(join(tmpdir(), 'cairn-rings-pull-'));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await app.close();
  });

  it('when a node has no ring yet, then the current one is installed whole, 0644 whatever the umask, with no temporary file left', async () => {
    // `cairn start`'s embedded database sets umask 077 in its process; a ring must stay readable.
    const umask = process.umask(0o077);
    const out = await pullOnce({ target: target(), clusterId: east, swiftDir: dir }).finally(() =>
      process.umask(umask),
    );
    expect(out).toEqual([expect.objectContaining({ ring: 'object', outcome: 'installed', version: 1 })]);
    expect(Buffer.compare(readFileSync(installed()), ring('object'))).toBe(0);
    expect(statSync(installed()).mode & 0o777).toBe(0o644);
    expect(leftovers()).toEqual([]);
  });

  it('when pulled again with nothing new, then the API answers 304 and the file is not rewritten', async () => {
    const before = statSync(installed());
    const out = await pullOnce({ target: target(), clusterId: east, swiftDir: dir, rings: ['object'] });
    expect(out).toEqual([expect.objectContaining({ ring: 'object', outcome: 'unchanged', version: 1 })]);
    const after = statSync(installed());
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
  });

  it('when a new version of the cluster ring is current, then it replaces the file by a rename', async () => {
    await push(east, ring('object-1'));
    const before = statSync(installed());
    const out = await pullOnce({ target: target(), clusterId: east, swiftDir: dir });
    expect(out).toEqual([expect.objectContaining({ ring: 'object', outcome: 'installed', version: 2 })]);
    expect(Buffer.compare(readFileSync(installed()), ring('object-1'))).toBe(0);
    expect(statSync(installed()).ino).not.toBe(before.ino);
  });

  it.each([
    ['shares no device with the installed one', () => west, /shares no device \(ip:port\/device\)/],
    ['has another part power', () => wide, /has part power 10, the installed one 8/],
  ])(
    'when the ring of another cluster (one that %s) is pulled, then it is refused with a sentence and the file is unchanged',
    async (_what, cluster, reason) => {
      const before = statSync(installed());
      const error = await pullOnce({ target: target(), clusterId: cluster(), swiftDir: dir }).catch((e: unknown) => e);
      expect(isCairnError(error)).toBe(true);
      expect((error as Error).message).toMatch(/^Not this node's cluster's ring: object\.ring\.gz from the API /);
      expect((error as Error).message).toMatch(reason);
      expect((error as Error).message).toContain('Nothing was installed');
      expect(Buffer.compare(readFileSync(installed()), ring('object-1'))).toBe(0);
      expect(statSync(installed()).mtimeMs).toBe(before.mtimeMs);
      expect(leftovers()).toEqual([]);
    },
  );

  it('when a first ring names none of the nodes of the rings already there, then it is refused', async () => {
    const other = mkdtempSync(join(tmpdir(), 'cairn-rings-pull-'));
    try {
      // A node whose container ring is on 10.x addresses is not this 127.0.0.1 cluster's node.
      copyFileSync(join(FIXTURES, 'object-2.ring.gz'), join(other, 'container.ring.gz'));
      const error = await pullOnce({ target: target(), clusterId: east, swiftDir: other }).catch((e: unknown) => e);
      expect((error as Error).message).toContain('names none of the storage nodes of the other rings');
      expect(readdirSync(other)).toEqual(['container.ring.gz']);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  /** `cairn …` as a process (from source), against the test API; SIGTERM once `untilStderr` is seen. */
  const run = (args: string[], untilStderr?: RegExp) => {
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      CAIRN_API_URL: app.baseUrl,
      CAIRN_API_KEY: `${ADMIN.name}:${ADMIN.key}`,
    };
    return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', '--conditions=cairn-source', 'packages/cli/src/main.ts', ...args],
        { cwd: REPO_ROOT, env },
      );
      let stdout = '';
      let stderr = '';
      let killed = false;
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        // Once: a second SIGTERM finds no handler left and ends the process at once (stop-signal.ts).
        if (!killed && untilStderr?.test(stderr)) killed = child.kill('SIGTERM');
      });
      child.once('exit', (code) => resolve({ code, stdout, stderr }));
    });
  };

  it('when run as a command with --interval, then a foreign ring is reported and SIGTERM ends it with 0; once, it exits 5', async () => {
    const node = mkdtempSync(join(tmpdir(), 'cairn-rings-pull-'));
    copyFileSync(join(FIXTURES, 'object.ring.gz'), join(node, 'object.ring.gz'));
    const once = await run(['rings', 'pull', '--cluster', 'pull-west', '--swift-dir', node]);
    expect(once.code).toBe(5);
    expect(once.stderr).toContain("Not this node's cluster's ring");
    const timer = await run(
      ['rings', 'pull', '--cluster', 'pull-west', '--swift-dir', node, '--interval', '60'],
      /Not this node's cluster's ring/,
    );
    expect([timer.code, timer.stderr]).toEqual([0, expect.stringContaining('stopped on request')]);
    expect(Buffer.compare(readFileSync(join(node, 'object.ring.gz')), ring('object'))).toBe(0);
    rmSync(node, { recursive: true, force: true });
  });

  it('when a ring is pushed with the command, then it is the new current version with its plan, and versions lists it', async () => {
    const pushed = await run([
      'rings',
      'push',
      '--cluster',
      'pull-wide',
      '--swift-dir',
      FIXTURES,
      '--ring',
      'object-2',
      '--plan-id',
      'grow-2',
      '--step',
      '3',
    ]);
    expect([pushed.code, pushed.stderr]).toEqual([0, '']);
    expect(pushed.stdout).toBe(
      `object-2.ring.gz is version 1 of cluster ${wide}, now current (md5 ${md5(ring('object-2'))})\n`,
    );
    const listed = await run(['rings', 'versions', '--cluster', 'pull-wide', '--ring', 'object-2', '-o', 'json']);
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({
        ring: 'object-2',
        version: 1,
        current: true,
        plan_id: 'grow-2',
        plan_step: 3,
        part_power: 10,
      }),
    ]);
    const missing = await run(['rings', 'push', '--cluster', 'pull-wide', '--swift-dir', dir, '--ring', 'account']);
    expect(missing.code).toBe(5);
    expect(missing.stderr).toContain('Cannot read the ring');
  });

  it('when a rollback is asked on a terminal, then "n" changes nothing (exit 2) and "y" rolls back', async () => {
    const onTerminal = (answer: string) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const line = [process.execPath, '--import', 'tsx', '--conditions=cairn-source', 'packages/cli/src/main.ts']
          .concat(['rings', 'rollback', '--cluster', 'pull-east', '--ring', 'object'])
          .map((a) => `'${a}'`)
          .join(' ');
        // A pty from util-linux's `script`, so that the command sees a terminal to ask on.
        const child = spawn('script', ['-qefc', line, '/dev/null'], {
          cwd: REPO_ROOT,
          env: {
            PATH: process.env.PATH ?? '',
            HOME: dir,
            CAIRN_API_URL: app.baseUrl,
            CAIRN_API_KEY: `${ADMIN.name}:${ADMIN.key}`,
          },
        });
        let out = '';
        let answered = false;
        // Never left waiting: a question that does not come fails the test instead of hanging it.
        const giveUp = setTimeout(() => child.kill('SIGKILL'), 60_000);
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (!answered && out.includes('[y/N]')) {
            answered = true;
            child.stdin.write(`${answer}\r`);
          }
        });
        child.once('exit', (code) => {
          clearTimeout(giveUp);
          resolve({ code, out });
        });
      });
    const current = async () =>
      (
        await app
          .http()
          .get(`/api/v1/clusters/${east}/rings/?ring=object&current=true`)
          .set('Authorization', ADMIN_AUTH)
      ).body.objects[0].version as number;
    expect(await current()).toBe(2);
    const no = await onTerminal('n');
    expect(no.out).toContain(`Roll back ring 'object' of cluster ${east} from version 2 to the one before? [y/N]`);
    expect([no.code, no.out]).toEqual([2, expect.stringContaining('Nothing was rolled back.')]);
    expect(await current()).toBe(2);
    const yes = await onTerminal('y');
    expect([yes.code, yes.out]).toEqual([
      0,
      expect.stringContaining(`object.ring.gz of cluster ${east} is back at version 1`),
    ]);
    expect(await current()).toBe(1);
  });
});
