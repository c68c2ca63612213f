import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { docExamples, substitute } from '../support/doc-examples';
import { launch, REPO_ROOT, type Launched } from '../support/processes';
import { migratedDataDir } from '../support/data-dir';

/**
 * The pages whose marked examples run, in this order, as a new user would try them: the README's
 * tour first, then the reference pages, all against one fresh `cairn start`.
 */
const PAGES = ['README.md', 'docs/management-api.md'];

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * bash, stopping at the first failing command. Nothing here defines `cairn`: the README's tour puts
 * the checkout's own on the PATH, as it tells a person to, and every later `cairn` is that one.
 * pnpm is not runnable (an example must not need it, nor print its banner); `curl` fails on an HTTP
 * error status, as a person reading its answer would notice.
 */
function prelude(): string {
  return [
    'set -euo pipefail',
    `pnpm() { echo "an example ran 'pnpm $*'; the examples must work without pnpm" >&2; return 1; }`,
    'curl() { command curl --silent --show-error --fail-with-body "$@"; }',
    `trap 'echo "failed: $BASH_COMMAND" >&2' ERR`,
  ].join('\n');
}

/** The PATH without any directory that has a `cairn` of its own: only the tour may provide one. */
const pathWithoutCairn = (): string =>
  (process.env.PATH ?? '')
    .split(delimiter)
    .filter((d) => d && !existsSync(join(d, 'cairn')))
    .join(delimiter);

function runBash(
  script: string,
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', [script], { cwd, env: { PATH: pathWithoutCairn(), LOG_LEVEL: 'warn', ...env } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => resolve({ code, out }));
  });
}

describe('the examples in the README and docs', () => {
  let dir: string;
  let running: Launched | undefined;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'cairn-doc-examples-'));
  });
  afterAll(async () => {
    await running?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('when every marked example is run in order against a fresh cairn start, then every command succeeds', async () => {
    const examples = docExamples(REPO_ROOT, PAGES);
    // Each page with marks keeps some: a page whose marks vanished would pass by running nothing.
    expect(new Set(examples.map((e) => e.where.split(':')[0]))).toEqual(new Set(PAGES));

    running = await launch({ CAIRN_DATA_DIR: await migratedDataDir(join(dir, 'pglite')) });
    const adminKey = running.adminAuth!.replace(/^ApiKey admin:/, '');
    const values = { apiUrl: running.apiUrl, gatewayUrl: running.gatewayUrl, adminKey };
    // The README's tour runs in the checkout, as it says (`pnpm start` has built dist/, as the
    // tests' global set-up has); the reference pages in a scratch directory, for the files they write.
    const body = examples
      .map((e, i) => {
        const page = e.where.split(':')[0];
        const cd = i === 0 || examples[i - 1]!.where.split(':')[0] !== page;
        const where = page === 'README.md' ? REPO_ROOT : dir;
        return `${cd ? `cd ${quote(where)}\n` : ''}echo ${quote(`### ${e.where} (${e.group})`)}\n${substitute(e.code, values)}\n`;
      })
      .join('\n');
    const script = join(dir, 'examples.sh');
    writeFileSync(script, `${prelude()}\n${body}\necho '### all examples ran'\n`);
    const home = join(dir, 'home');
    mkdirSync(home);
    const run = await runBash(script, dir, { HOME: home });
    if (run.code !== 0 || !run.out.includes('### all examples ran')) {
      // The last "###" line names the example that failed; the server's log may say why.
      throw new Error(
        `an example failed (exit ${run.code}); the end of its output:\n${run.out.slice(-6000)}\n--- cairn start:\n${running.output().slice(-4000)}`,
      );
    }
  }, 150_000);
});
