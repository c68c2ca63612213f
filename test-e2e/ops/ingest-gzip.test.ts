/**
 * `cairn utilization ingest-logs` on gzipped logs (recognised by their first bytes, whatever their
 * name) and its progress line (on a terminal only). Real process, real management API on Postgres.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { cairn, nodeCommand, REPO_ROOT } from '../support/processes';
import { ADMIN_AUTH, ADMIN_AUTH_NAME, ADMIN_KEY, startStack, type Stack } from '../support/stack';

const HOUR = 3_600_000;

/** A Swift proxy-logging line with ` {account}` after the default template. */
const line = (i: number, startMs: number): string => {
  const start = (startMs / 1000).toFixed(6);
  return `10.0.0.8 10.0.0.8 24/Nov/2026/00/00/00 PUT /v1/AUTH_owner/c/o${i} HTTP/1.0 201 - - - 100 0 - tx${i} - 0.0010 - - ${start} ${start} 0 AUTH_owner`;
};

/** Runs cairn under util-linux `script`, so that its stdout and stderr are a pseudo-terminal. */
function onTerminal(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const [node, nodeArgs] = nodeCommand('packages/cli/src/main.ts');
  // A pseudo-terminal starts with no width: give it one, as a person's terminal has.
  const quoted = `stty cols 200; ${[node, ...nodeArgs, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ')}`;
  const child = spawn('script', ['-qec', quoted, '/dev/null'], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', TERM: 'dumb', ...env },
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out })));
}

describe('ingest-logs on gzipped logs', () => {
  let stack: Stack;
  let work: string;
  let env: Record<string, string>;
  const hour = Math.floor(Date.now() / HOUR) * HOUR - 2 * HOUR;
  const text = (from: number, to: number) =>
    `${Array.from({ length: to - from }, (_, k) => line(from + k, hour + (from + k) * 10)).join('\n')}\n`;

  beforeAll(async () => {
    stack = await startStack({ database: 'postgres' });
    await stack.createUser('owner', 'owner-password-0000000001');
    const put = await fetch(`${stack.apiUrl}/api/v1/clusters/1/devices/`, {
      method: 'PUT',
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
      body: JSON.stringify({ policies: [{ index: 0, name: 'gold', default: true }], devices: [] }),
    });
    expect(put.status).toBe(204);
    work = mkdtempSync(join(tmpdir(), 'cairn-ingest-gzip-'));
    env = {
      CAIRN_API_URL: stack.apiUrl,
      CAIRN_API_KEY: `${ADMIN_AUTH_NAME}:${ADMIN_KEY}`,
      XDG_CONFIG_HOME: '/nonexistent',
    };
  });
  afterAll(async () => {
    await stack?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('when a rotated log is gzipped, named .gz or not, then its lines are read as the plain log’s are: the same batches, nothing counted twice', async () => {
    const plain = join(work, 'access.log');
    writeFileSync(plain, text(0, 250));
    // No .gz in the name: recognised by its magic bytes.
    const rotated = join(work, 'access.log.1');
    writeFileSync(rotated, gzipSync(text(0, 250)));
    const first = await cairn(['utilization', 'ingest-logs', '--cluster', '1', '--batch-lines', '100', rotated], env);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('cluster 1: 250 line(s), 250 request(s) counted, 0 unattributed');
    expect(first.stdout).toContain('0 malformed');
    expect(first.stdout).toMatch(/3 batch\(es\) sent, 0 already recorded/);
    // The plain log yields the very same batches: the API has them all already.
    const again = await cairn(['utilization', 'ingest-logs', '--cluster', '1', '--batch-lines', '100', plain], env);
    expect(again.stdout).toMatch(/250 line\(s\), 250 request\(s\) counted.*3 batch\(es\) sent, 3 already recorded/);

    // Two gzip members one after the other (an appending rotation).
    const members = Buffer.concat([gzipSync(text(250, 300)), gzipSync(text(300, 340))]);
    const appended = join(work, 'appended.gz');
    writeFileSync(appended, members);
    const third = await cairn(['utilization', 'ingest-logs', '--cluster', '1', appended], env);
    expect(third.stdout).toMatch(
      /cluster 1: 90 line\(s\), 90 request\(s\) counted, .*0 malformed.*1 batch\(es\) sent, 0 already recorded/,
    );

    const range = `start=${new Date(hour).toISOString()}&end=${new Date(hour + HOUR).toISOString()}`;
    const res = await fetch(`${stack.apiUrl}/api/v1/clusters/1/utilization/summary/?${range}`, {
      headers: { Authorization: ADMIN_AUTH },
    });
    const summary = (await res.json()) as { objects: Array<{ account: string; bytes_in: number; req_count: number }> };
    expect(summary.objects.map((o) => [o.account, o.bytes_in, o.req_count])).toEqual([['AUTH_owner', 340 * 100, 340]]);
  });

  it('when a gzipped file is corrupt, then the command fails naming zlib’s reason and exits 1', async () => {
    const broken = join(work, 'broken.gz');
    writeFileSync(broken, gzipSync(text(0, 50)).subarray(0, 40));
    const r = await cairn(['utilization', 'ingest-logs', '--cluster', '1', broken], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/broken\.gz: not a readable gzip file \(unexpected end of file\)/i);
  });

  it('when stderr is a terminal, then a progress line is drawn and cleared; in a pipe there is none', async () => {
    const file = join(work, 'progress.log.gz');
    writeFileSync(file, gzipSync(text(1000, 4000)));
    const tty = await onTerminal(['utilization', 'ingest-logs', '--cluster', '1', file], env);
    expect(tty.code).toBe(0);
    // Redrawn in place: carriage return, then "erase line" (ESC [ K).
    expect(tty.out).toMatch(
      new RegExp(`\r${String.fromCharCode(27)}\\[Kreading \\S+progress\\.log\\.gz, line \\d+ \\d+/\\d+ \\(\\d+ %\\)`),
    );
    expect(tty.out).toContain('3000 line(s)');
    const pipe = await cairn(['utilization', 'ingest-logs', '--cluster', '1', file], env);
    expect(pipe.code).toBe(0);
    expect(pipe.stderr).not.toContain('\x1b[');
    expect(pipe.stderr).not.toContain('reading');
  });
});
