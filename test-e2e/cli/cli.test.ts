/**
 * @slow: about 80 cairn processes against one cairn start (jest.sequencer.js starts it first)
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { CAIRN_VERSION } from '@cairn/runtime';
import { cairn, launch, nodeCommand, NO_KEEP_ALIVE, REPO_ROOT, type Launched } from '../support/processes';
import { migratedDataDir } from '../support/data-dir';

const PASSWORD = 'a-password-of-twenty-plus';

/**
 * A module a client command has no use for: joi-heavy domain, yaml, CSV, rings, Swift client, servers.
 * (The domain's password-hash, node:crypto alone, reads CAIRN_PASSWORD_HASH_PARAMS with the settings.)
 */
const heavy = (file: string) =>
  /\/node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?(yaml|csv-parse|bcryptjs)\//.test(file) ||
  /\/domain\/dist\/(?!(errors|models|rings|password-hash)\.js$)/.test(file) ||
  /\/rings\/dist\/(?!defaults\.js$)/.test(file) ||
  /\/(swift-cluster|management-api|auth-gateway)\/dist\//.test(file) ||
  /\/runtime\/dist\/(?!version\.js$)/.test(file);
const joi = (file: string) => /\/node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?joi\//.test(file);

describe('cairn as a command line', () => {
  it('when asked for help at any level or the version, then it answers on stdout and exits 0', async () => {
    const top = await cairn(['--help'], {});
    expect([top.code, top.stderr]).toEqual([0, '']);
    expect(top.stdout).toMatch(/^Usage: cairn /);
    expect(top.stdout).toContain('Exit codes: 0 success');
    const sub = await cairn(['utilization', 'collect', '--help'], {});
    expect([sub.code, sub.stderr]).toEqual([0, '']);
    expect(sub.stdout).toContain('--cluster <id|name>');
    const version = await cairn(['--version'], {});
    expect([version.code, version.stdout]).toEqual([0, `${CAIRN_VERSION}\n`]);
  });

  it('when the command tree is loaded, then neither server nor their runtime is: a client command starts light', async () => {
    // What every `cairn users list` in a script pays before it does anything.
    const [node, args] = nodeCommand('packages/cli/src/program.ts');
    const script = `require(${JSON.stringify(args.at(-1))}); process.stdout.write(Object.keys(require.cache).join('\\n'))`;
    const loaded = await new Promise<string[]>((resolve, reject) =>
      execFile(node, ['-e', script], (err, stdout) => (err ? reject(err) : resolve(stdout.split('\n')))),
    );
    expect(loaded.some((f) => f.includes('/cli/dist/commands/users.js'))).toBe(true);
    expect(loaded.filter(heavy)).toEqual([]);
    // Nor joi: the settings' schemas load when a command reads them, and --help and --version do not.
    expect(loaded.filter(joi)).toEqual([]);
  });

  it("when a client command runs, then it loads neither the domain's schemas, yaml, the rings code nor a server", async () => {
    // A management API that answers an empty list: the command runs to its end, printing a table.
    const api = createServer((_req, res) =>
      res.setHeader('content-type', 'application/json').end('{"meta":{"next":null,"total_count":0},"objects":[]}'),
    );
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    const dir = mkdtempSync(join(tmpdir(), 'cairn-cli-'));
    try {
      const [node, args] = nodeCommand('packages/cli/src/main.ts');
      const list = join(dir, 'loaded');
      const script =
        `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, Object.keys(require.cache).join('\\n')));` +
        `process.argv = [process.argv[0], 'cairn', 'users', 'list']; require(${JSON.stringify(args.at(-1))})`;
      const { port } = api.address() as AddressInfo;
      const env = {
        PATH: process.env.PATH,
        CAIRN_API_URL: `http://127.0.0.1:${port}`,
        CAIRN_API_KEY: 'admin:k3y',
        XDG_CONFIG_HOME: dir,
      };
      const stdout = await new Promise<string>((resolve, reject) =>
        execFile(node, ['-e', script], { env }, (err, out) => (err ? reject(err) : resolve(out))),
      );
      expect(stdout).toMatch(/^ID {2}/);
      const loaded = readFileSync(list, 'utf8').split('\n');
      expect(loaded.some((f) => f.includes('/cli/dist/remote/list.js'))).toBe(true);
      expect(loaded.filter(heavy)).toEqual([]);
    } finally {
      api.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('when a command or option is unknown, then one error line, a hint, and exit 2', async () => {
    const typo = await cairn(['clustrs', 'list'], {});
    expect(typo.code).toBe(2);
    expect(typo.stdout).toBe('');
    expect(typo.stderr).toBe(
      "error: unknown command 'clustrs'\n(Did you mean clusters?)\nRun 'cairn --help' for usage.\n",
    );
    const option = await cairn(['users', 'list', '--colour'], {});
    expect(option.code).toBe(2);
    expect(option.stderr).toBe("error: unknown option '--colour'\nRun 'cairn users list --help' for usage.\n");
  });

  it('when migrate --rollback-all comes without its confirmation, then it says what it destroys, exits 2 and touches nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-cli-'));
    try {
      const run = await cairn(['migrate', '--rollback-all'], { CAIRN_DATA_DIR: join(dir, 'never') });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('drops every table and with them all clusters, storage users');
      expect(run.stderr).toContain('--yes-destroy-all-data');
      expect(() => statSync(join(dir, 'never'))).toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each(['bash', 'zsh'])(
    'when a %s completion script is printed, then bash parses it and it names the commands',
    async (shell) => {
      const run = await cairn(['completion', shell], {});
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(
        "'users') echo 'list show create update enable disable set-password set-quota quota delete import",
      );
      const dir = mkdtempSync(join(tmpdir(), 'cairn-cli-'));
      try {
        writeFileSync(join(dir, 'c.sh'), run.stdout);
        await new Promise<void>((resolve, reject) =>
          execFile('bash', ['-n', join(dir, 'c.sh')], (err, _o, stderr) =>
            err ? reject(new Error(stderr)) : resolve(),
          ),
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

/** `cairn` on a terminal (a pty from util-linux's `script`), answering `answer` to its question. */
function cairnOnTerminal(
  args: string[],
  env: Record<string, string>,
  answer: string,
): Promise<{ code: number | null; out: string }> {
  const [node, nodeArgs] = nodeCommand('packages/cli/src/main.ts');
  const line = [node, ...nodeArgs, ...args].map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(' ');
  return new Promise((resolve) => {
    const child = spawn('script', ['-qefc', line, '/dev/null'], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warn', ...env },
    });
    let out = '';
    let answered = false;
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (!answered && out.includes('[y/N]')) {
        answered = true;
        child.stdin.write(`${answer}\r`);
      }
    });
    child.once('exit', (code) => resolve({ code, out }));
  });
}

/**
 * A running `cairn start` on PGlite, as `pnpm start` runs it, and its admin's "<operator>:<key>".
 * Once, not also on Postgres: `cairn` is an HTTP client, the API's integration tests cover both
 * database kinds behind it, and start.test.ts starts `cairn start` on Postgres.
 */
async function startCairn(
  dir: string,
): Promise<{ running: Launched; operator: string; key: string; cleanup: () => Promise<void> }> {
  const running = await launch({ CAIRN_DATA_DIR: await migratedDataDir(join(dir, 'pglite')) });
  const [operator, key] = running.adminAuth!.replace(/^ApiKey /, '').split(':') as [string, string];
  return { running, operator, key, cleanup: async () => void (await running.stop()) };
}

describe('cairn against a running Cairn', () => {
  let dir: string;
  let server: Awaited<ReturnType<typeof startCairn>>;
  let env: Record<string, string>;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cairn-cli-'));
    server = await startCairn(dir);
    env = { XDG_CONFIG_HOME: join(dir, 'config') };
  }, 120_000);
  afterAll(async () => {
    await server?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('when a context is added with the key on stdin, then the file is 0600, holds no key, and commands use it', async () => {
    const added = await cairn(
      [
        'context',
        'add',
        'local',
        '--api-url',
        server.running.apiUrl,
        '--operator',
        server.operator,
        '--key-stdin',
        '--cluster',
        'default',
      ],
      env,
      `${server.key}\n`,
    );
    expect(added.code).toBe(0);
    const file = join(dir, 'config', 'cairn', 'config.yaml');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'config', 'cairn', 'keys', 'local')).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).not.toContain(server.key);
    expect(added.out).not.toContain(server.key);
    const list = await cairn(['context', 'list', '-o', 'json'], env);
    expect(JSON.parse(list.stdout)).toEqual([
      expect.objectContaining({ current: '*', name: 'local', 'api-url': server.running.apiUrl, cluster: 'default' }),
    ]);
    const clusters = await cairn(['clusters', 'list', '-o', 'json'], env);
    expect(clusters.code).toBe(0);
    expect((JSON.parse(clusters.stdout) as Array<{ name: string }>).map((c) => c.name)).toEqual(['default']);
  });

  it('when the API URL is given as the start banner prints it (…/api/v1/), then contexts and CAIRN_API_URL take it as the root', async () => {
    const other = { XDG_CONFIG_HOME: join(dir, 'config-banner') };
    const banner = `${server.running.apiUrl}/api/v1/`;
    const added = await cairn(
      ['context', 'add', 'banner', '--api-url', banner, '--operator', server.operator, '--key-stdin'],
      other,
      `${server.key}\n`,
    );
    expect([added.code, added.stderr]).toEqual([0, expect.stringContaining("Context 'banner' saved")]);
    const list = await cairn(['context', 'list', '-o', 'json'], other);
    expect(JSON.parse(list.stdout)).toEqual([expect.objectContaining({ 'api-url': server.running.apiUrl })]);
    expect((await cairn(['clusters', 'list', '-q'], other)).stdout).toBe('1\n');
    const fromEnv = await cairn(['clusters', 'list', '-q'], {
      ...other,
      CAIRN_API_URL: `${server.running.apiUrl}/api/v1`,
      CAIRN_API_KEY: `${server.operator}:${server.key}`,
    });
    expect([fromEnv.code, fromEnv.stdout]).toEqual([0, '1\n']);
  });

  it('when a context is added with a wrong key, a pasted header line, an unreachable API or an unknown cluster, then each is said, with its exit code, and nothing is saved', async () => {
    const other = { XDG_CONFIG_HOME: join(dir, 'config-refused') };
    const add = (apiUrl: string, key: string, ...more: string[]) =>
      cairn(
        ['context', 'add', 'x', '--api-url', apiUrl, '--operator', server.operator, '--key-stdin', ...more],
        other,
        key,
      );
    const header = await add(server.running.apiUrl, `Authorization: ApiKey ${server.operator}:${server.key}\n`);
    expect(header.code).toBe(5);
    expect(header.stderr).toContain("holds an HTTP header line ('Authorization: ApiKey …'), not a key");
    expect(header.out).not.toContain(server.key);
    const wrong = await add(server.running.apiUrl, 'not-the-key');
    expect(wrong.code).toBe(4);
    expect(wrong.stderr).toContain(`The management API at ${server.running.apiUrl} refused the key (401`);
    const down = await add('http://127.0.0.1:9', server.key);
    expect(down.code).toBe(6);
    expect(down.stderr).toContain('check --api-url');
    const cluster = await add(server.running.apiUrl, server.key, '--cluster', 'no-such-cluster');
    expect(cluster.code).toBe(3);
    expect(cluster.stderr).toContain("no cluster named 'no-such-cluster'");
    for (const run of [wrong, down, cluster]) expect(run.stderr).toContain('Nothing was saved');
    expect(JSON.parse((await cairn(['context', 'list', '-o', 'json'], other)).stdout)).toEqual([]);
    // Offline set-up: saved without asking.
    const offline = await add('http://127.0.0.1:9', server.key, '--no-check');
    expect(offline.code).toBe(0);
    expect(JSON.parse((await cairn(['context', 'list', '-o', 'json'], other)).stdout)).toHaveLength(1);
  }, 120_000);

  it('when a user is created with its password on stdin, then it logs in through the gateway, and the password is never printed', async () => {
    const made = await cairn(
      ['users', 'create', '--user', 'carol', '--password-stdin', '-o', 'json'],
      env,
      `${PASSWORD}\n`,
    );
    expect(made.code).toBe(0);
    expect(made.out).not.toContain(PASSWORD);
    expect(JSON.parse(made.stdout)).toMatchObject({ user: 'carol', enabled: true, is_superuser: false });
    const login = await fetch(`${server.running.gatewayUrl}/auth/v1.0`, {
      headers: { 'X-Auth-User': 'carol', 'X-Auth-Key': PASSWORD, ...NO_KEEP_ALIVE },
    });
    expect(login.status).toBe(200);
    const id = (JSON.parse(made.stdout) as { id: string }).id;
    expect((await cairn(['users', 'disable', id, '-q'], env)).stdout).toBe(`${id}\n`);
    expect(
      (
        await fetch(`${server.running.gatewayUrl}/auth/v1.0`, {
          headers: { 'X-Auth-User': 'carol', 'X-Auth-Key': PASSWORD, ...NO_KEEP_ALIVE },
        })
      ).status,
    ).toBe(401);
  });

  it('when users and operators are named instead of their ids, then commands find them; a name in two clusters needs --cluster, and says so', async () => {
    const second = await cairn(
      [
        'clusters',
        'create',
        '--name',
        'second',
        '--auth-url',
        'http://127.0.0.1:1/auth',
        '--storage-url',
        'http://127.0.0.1:1/v1',
        '-q',
      ],
      env,
    );
    expect(second.code).toBe(0);
    const secondId = second.stdout.trim();
    const here = (
      await cairn(['users', 'create', '--user', 'twin', '--password-stdin', '-q'], env, PASSWORD)
    ).stdout.trim();
    const there = (
      await cairn(['users', 'create', '--user', 'twin', '--cluster', 'second', '--password-stdin', '-q'], env, PASSWORD)
    ).stdout.trim();
    expect(here).not.toBe(there);
    // The context's default cluster (default) picks among them, --cluster names another.
    expect((await cairn(['users', 'show', 'twin', '-q'], env)).stdout).toBe(`${here}\n`);
    expect((await cairn(['users', 'show', 'twin', '--cluster', 'second', '-q'], env)).stdout).toBe(`${there}\n`);
    expect((await cairn(['users', 'disable', 'twin', '--cluster', secondId, '-o', 'json'], env)).stdout).toMatch(
      /"enabled": false/,
    );
    expect(JSON.parse((await cairn(['users', 'quota', 'twin', '-o', 'json'], env)).stdout)).toMatchObject({ id: here });
    // Without a default cluster, the name alone is ambiguous.
    const noContext = {
      XDG_CONFIG_HOME: join(dir, 'config-none'),
      CAIRN_API_URL: server.running.apiUrl,
      CAIRN_API_KEY: `${server.operator}:${server.key}`,
    };
    const ambiguous = await cairn(['users', 'show', 'twin'], noContext);
    expect(ambiguous.code).toBe(5);
    expect(ambiguous.stderr).toBe(
      `cairn: There is a user named 'twin' in each of the clusters 'default' (id 1), 'second' (id ${secondId}): say which with --cluster <id|name>.\n`,
    );
    const missing = await cairn(['users', 'show', 'nobody'], env);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain("No user named 'nobody' in cluster 'default' (the context's default cluster");
    // users list honours the context's default cluster; --all-clusters does not.
    const listed = (await cairn(['users', 'list', '--filter', 'user=twin', '-q'], env)).stdout;
    expect(listed).toBe(`${here}\n`);
    const all = (await cairn(['users', 'list', '--filter', 'user=twin', '--all-clusters', '-q'], env)).stdout;
    expect(all.trim().split('\n').sort()).toEqual([here, there].sort());
    // S3 credentials and operators by name too.
    const cred = await cairn(['s3-credentials', 'create', '--user', 'twin', '--cluster', 'second', '-o', 'json'], env);
    expect(JSON.parse(cred.stdout)).toMatchObject({ user: `/api/v1/users/${there}/` });
    const op = await cairn(['operators', 'show', server.operator, '-o', 'json'], env);
    expect(JSON.parse(op.stdout)).toMatchObject({ name: server.operator });
    expect((await cairn(['operators', 'keys', 'list', server.operator, '-q'], env)).code).toBe(0);
    expect((await cairn(['operators', 'show', 'no-such-operator'], env)).code).toBe(3);
  }, 120_000);

  it('when a user or cluster is deleted, then a terminal is asked first, a script must say --yes, and no answer deletes nothing', async () => {
    const id = (
      await cairn(
        ['users', 'create', '--user', 'doomed', '--cluster', 'second', '--password-stdin', '-q'],
        env,
        PASSWORD,
      )
    ).stdout.trim();
    const piped = await cairn(['users', 'delete', 'doomed', '--cluster', 'second'], env);
    expect(piped.code).toBe(2);
    expect(piped.stderr).toContain('standard input is not a terminal to ask on: add --yes');
    const declined = await cairnOnTerminal(['users', 'delete', 'doomed', '--cluster', 'second'], env, 'n');
    expect(declined.out).toContain(`Delete user 'doomed' (id ${id}) of cluster /api/v1/clusters/`);
    expect(declined.out).toContain('Nothing was deleted.');
    expect(declined.code).toBe(2);
    expect((await cairn(['users', 'show', id, '-q'], env)).stdout).toBe(`${id}\n`);
    const accepted = await cairnOnTerminal(['users', 'delete', 'doomed', '--cluster', 'second'], env, 'y');
    expect(accepted.code).toBe(0);
    expect((await cairn(['users', 'show', id], env)).code).toBe(3);
    // The second cluster's other users go by --yes; then the cluster itself, asked on a terminal.
    for (const user of ['twin']) {
      expect((await cairn(['users', 'delete', user, '--cluster', 'second', '--yes'], env)).code).toBe(0);
    }
    expect((await cairn(['clusters', 'delete', 'second'], env)).code).toBe(2);
    const cluster = await cairnOnTerminal(['clusters', 'delete', 'second'], env, 'yes');
    expect(cluster.out).toMatch(/Delete cluster 'second' \(id \d+\) \(refused while it has users\)\? \[y\/N\]/);
    expect(cluster.code).toBe(0);
    expect((await cairn(['clusters', 'list', '-q'], env)).stdout).toBe('1\n');
  }, 120_000);

  it('when a password or key given on standard input is empty, then the refusal names it', async () => {
    const empty = await cairn(['users', 'create', '--user', 'blank', '--password-stdin'], env, '\n');
    expect(empty.code).toBe(5);
    expect(empty.stderr).toBe('cairn: The password is empty (standard input, --password-stdin).\n');
    const key = await cairn(
      ['context', 'add', 'blank', '--api-url', server.running.apiUrl, '--operator', server.operator, '--key-stdin'],
      { XDG_CONFIG_HOME: join(dir, 'config-blank') },
      '',
    );
    expect(key.code).toBe(5);
    expect(key.stderr).toBe('cairn: The API key is empty (standard input, --key-stdin).\n');
  });

  it('when a list spans several pages, then every page is followed, unless --limit; -q, csv and filters shape the output', async () => {
    for (const n of [1, 2, 3, 4, 5]) {
      expect(
        (await cairn(['users', 'create', '--user', `page${n}`, '--password-stdin', '-q'], env, PASSWORD)).code,
      ).toBe(0);
    }
    const all = await cairn(['users', 'list', '--filter', 'user__startswith=page', '--page-size', '2', '-q'], env);
    expect(all.code).toBe(0);
    expect(all.stdout.trim().split('\n')).toHaveLength(5);
    const limited = await cairn(
      ['users', 'list', '--filter', 'user__startswith=page', '--page-size', '2', '--limit', '3', '-o', 'json'],
      env,
    );
    expect((JSON.parse(limited.stdout) as Array<{ user: string }>).map((u) => u.user)).toEqual([
      'page1',
      'page2',
      'page3',
    ]);
    const csv = await cairn(['users', 'list', '--filter', 'user=page4', '-o', 'csv'], env);
    expect(csv.stdout).toMatch(
      /^id,user,cluster,is_superuser,enabled\r\n\d+,page4,\/api\/v1\/clusters\/1\/,false,true\r\n$/,
    );
  });

  it('when the API answers not found, forbidden, refused or not at all, then the exit codes are 3, 4, 5 and 6', async () => {
    const missing = await cairn(['users', 'show', '987654'], env);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toMatch(/^cairn: reading user 987654: the management API answered 404/);
    expect((await cairn(['clusters', 'list'], { ...env, CAIRN_API_KEY: `${server.operator}:wrong-key` })).code).toBe(4);
    const short = await cairn(['users', 'create', '--user', 'shorty', '--password-stdin'], env, 'too-short');
    expect(short.code).toBe(5);
    expect(short.stderr).toContain('20 characters');
    const down = await cairn(['clusters', 'list'], { ...env, CAIRN_API_URL: 'http://127.0.0.1:9' });
    expect(down.code).toBe(6);
    expect(down.stderr).toMatch(/did not answer GET \/api\/v1\/clusters\//);
  }, 120_000);

  it('when a quota is set, shown and cleared with cairn, then the API holds exactly that, and a bad value or an unknown policy is refused', async () => {
    const made = await cairn(['users', 'create', '--user', 'quoted', '--password-stdin', '-q'], env, PASSWORD);
    const id = made.stdout.trim();
    const set = await cairn(
      ['users', 'set-quota', id, '--bytes', '10737418240', '--count', '9223372036854775807', '-o', 'json'],
      env,
    );
    expect(set.code).toBe(0);
    // Past 2^53 the API writes the quota as a decimal string, exact.
    expect(JSON.parse(set.stdout)).toMatchObject({
      quota_bytes: 10737418240,
      quota_count: '9223372036854775807',
      quota_status: 'pending',
    });
    const shown = await cairn(['users', 'quota', id, '-o', 'json'], env);
    expect(JSON.parse(shown.stdout)).toEqual(
      expect.objectContaining({ id, quota_bytes: 10737418240, quota_bytes_policy: null, quota_status: 'pending' }),
    );
    // As a table: the quota columns, not the user's other fields.
    const table = (await cairn(['users', 'quota', id], env)).stdout;
    expect(table).toMatch(/QUOTA_BYTES .*QUOTA_STATUS/);
    expect(table).not.toContain('ENABLED');
    expect(
      (await cairn(['users', 'set-quota', id, '--bytes', 'none', '--count', 'none', '-o', 'json'], env)).stdout,
    ).toMatch(/"quota_bytes": null/);
    const bad = await cairn(['users', 'set-quota', id, '--bytes', '10GB'], env);
    expect(bad.code).toBe(5);
    expect(bad.stderr).toContain("--bytes takes a whole number, or 'none'");
    const unknown = await cairn(['users', 'set-quota', id, '--bytes-policy', 'platinum=5'], env);
    expect(unknown.code).toBe(5);
    expect(unknown.stderr).toContain('platinum');
    expect((await cairn(['users', 'set-quota', id], env)).code).toBe(5);
  });

  it("when an S3 credential is created with --expires-at, then the API holds that expiry and lists it; a past one exits 5 with the API's sentence", async () => {
    const id = (
      await cairn(['users', 'create', '--user', 's3-expiring', '--password-stdin', '-q'], env, PASSWORD)
    ).stdout.trim();
    const at = new Date(Date.now() + 86_400_000);
    const made = await cairn(
      ['s3-credentials', 'create', '--user', id, '--expires-at', at.toISOString(), '-o', 'json'],
      env,
    );
    expect([made.code, made.stderr]).toEqual([0, '']);
    const body = JSON.parse(made.stdout) as { id: string; expires_at: string; secret: string };
    expect(body.expires_at).toBe(at.toISOString());
    expect(body.secret).toMatch(/^\S{40}$/);
    const listed = await cairn(['s3-credentials', 'list', '--user', id, '-o', 'csv'], env);
    expect(listed.stdout).toContain(`,${at.toISOString()}\r\n`);
    const past = await cairn(['s3-credentials', 'create', '--user', id, '--expires-at', '2001-01-01T00:00:00Z'], env);
    expect(past.code).toBe(5);
    expect(past.stderr).toContain("'expires_at' field must be an ISO 8601 date-time in the future");
  });

  it('when the utilization summary is read with cairn, then each account shows its quota and the share of it used', async () => {
    const id = (
      await cairn(['users', 'create', '--user', 'billed', '--password-stdin', '-q'], env, PASSWORD)
    ).stdout.trim();
    expect((await cairn(['users', 'set-quota', id, '--bytes', '4000', '-q'], env)).code).toBe(0);
    const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3 * 3_600_000;
    const sample = { account: 'AUTH_billed', bytes_used: 1000, object_count: 1, container_count: 1 };
    const posted = await fetch(`${server.running.apiUrl}/api/v1/clusters/1/utilization/storage/`, {
      method: 'POST',
      headers: {
        Authorization: `ApiKey ${server.operator}:${server.key}`,
        'Content-Type': 'application/json',
        ...NO_KEEP_ALIVE,
      },
      body: JSON.stringify({ interval: 3600, sampled_at: new Date(hour + 60_000).toISOString(), samples: [sample] }),
    });
    expect(posted.status).toBe(200);
    const range = ['--start', new Date(hour).toISOString(), '--end', new Date(hour + 3_600_000).toISOString()];
    const json = await cairn(['utilization', 'summary', ...range, '-o', 'json'], env);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({
        account: 'AUTH_billed',
        bytes_used_peak: 1000,
        quota_bytes: 4000,
        quota_bytes_used_pct: 25,
        quota_count: null,
      }),
    ]);
    const csv = (await cairn(['utilization', 'summary', ...range, '-o', 'csv'], env)).stdout.split('\r\n');
    expect(csv[0]).toMatch(/,quota_bytes,quota_bytes_used_pct,quota_count,quota_count_used_pct$/);
    expect(csv[1]).toMatch(/^AUTH_billed,.*,4000,25,,$/);
  });

  it('when the servers are asked, then /healthz and GET /api/v1/ report the version cairn --version prints', async () => {
    const get = (url: string) => fetch(url, { headers: NO_KEEP_ALIVE });
    expect(await (await get(`${server.running.apiUrl}/healthz`)).json()).toEqual({
      status: 'ok',
      version: CAIRN_VERSION,
    });
    expect(await (await get(`${server.running.gatewayUrl}/healthz`)).json()).toEqual({
      status: 'ok',
      version: CAIRN_VERSION,
    });
    expect(((await (await get(`${server.running.apiUrl}/api/v1/`)).json()) as { version: string }).version).toBe(
      CAIRN_VERSION,
    );
  });
});
