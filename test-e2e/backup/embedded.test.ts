/**
 * @slow: three cairn starts, each backed up and restored (jest.sequencer.js starts it first)
 */
import { randomBytes } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cairn, launch, NO_KEEP_ALIVE, type Launched } from '../support/processes';
import { expectRestored, populate, type Populated } from './support';
import { migratedDataDir } from '../support/data-dir';

/**
 * `cairn backup` and `cairn restore` on embedded PGlite, as real processes: a backup taken while
 * `cairn start` runs (through its management API, as the data directory admits one process),
 * restored into a fresh data directory under a new `cairn start`, which must let the users log in,
 * verify S3 signatures and read back the utilization history.
 */
const S3_KEYS = `k1:${randomBytes(32).toString('base64')}`;
const BASE_ENV = { CAIRN_S3_SECRET_KEYS: S3_KEYS, CAIRN_S3TOKENS_REQUIRE_SERVICE_TOKEN: 'false' };

describe('cairn backup and cairn restore (embedded PGlite)', () => {
  let root: string;
  /**
   * A start on its own data directory, populated. The first test backs it up while it runs, then
   * stops it; the third backs up the stopped directory without a server: one start between them.
   */
  let shared: { dir: string; env: Record<string, string>; running?: Launched; auth: string; populated: Populated };
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'cairn-e2e-backup-'));
    const dir = join(root, 'original');
    const env = { ...BASE_ENV, CAIRN_DATA_DIR: await migratedDataDir(dir) };
    const running = await launch(env);
    shared = { dir, env, running, auth: running.adminAuth!, populated: undefined as unknown as Populated };
    shared.populated = await populate(running.apiUrl, shared.auth);
  }, 120_000);
  afterAll(async () => {
    await shared?.running?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  /** Stops the shared start, once; a clean stop exits 0. */
  async function stopShared(): Promise<void> {
    const running = shared.running;
    shared.running = undefined;
    if (running) expect(await running.stop()).toBe(0);
  }

  it('when a backup is taken while cairn start runs and restored into a fresh data directory, then users log in, S3 signatures verify and utilization reads back', async () => {
    const { dir: original, env, auth, populated } = shared;
    const running = shared.running!;
    const restored = join(root, 'restored');
    const file = join(root, 'cairn.backup');
    const admin = auth.replace(/^ApiKey /, '');
    // Without a key the command cannot reach the running server's data: it says what to set.
    const keyless = await cairn(['backup', file], env);
    expect(keyless.code).toBe(5);
    expect(keyless.out).toContain('set CAIRN_API_KEY="<operator>:<key>"');
    expect(existsSync(file)).toBe(false);

    // A reader may not take the whole database away.
    const reader = await fetch(`${running.apiUrl}/api/v1/operators/`, {
      method: 'POST',
      headers: { Authorization: auth, 'Content-Type': 'application/json', ...NO_KEEP_ALIVE },
      body: JSON.stringify({ name: 'peeker', role: 'reader' }),
    }).then((r) => r.json() as Promise<{ api_key: string }>);
    const refused = await cairn(['backup', file], {
      ...env,
      CAIRN_API_URL: running.apiUrl,
      CAIRN_API_KEY: `peeker:${reader.api_key}`,
    });
    expect(refused.code).toBe(1);
    expect(refused.out).toContain(
      "refused the backup (403): Operator 'peeker' is a reader; only an admin with access to every cluster may read a backup of the whole database.",
    );

    const taken = await cairn(['backup', file], { ...env, CAIRN_API_URL: running.apiUrl, CAIRN_API_KEY: admin });
    expect(taken.out).toContain(`Backup of the embedded database written to ${file}`);
    expect(taken.out).toContain(`management API at ${running.apiUrl}`);
    expect(taken.code).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(root).filter((f) => f.includes('.partial-'))).toEqual([]);

    // Each backup is in the audit trail, under the operator who took it.
    const audit = await fetch(`${running.apiUrl}/api/v1/audit/?action=backup`, {
      headers: { Authorization: auth, ...NO_KEEP_ALIVE },
    }).then((r) => r.json() as Promise<{ objects: { operator: string; action: string }[] }>);
    expect(audit.objects.map((o) => o.action)).toEqual(['backup']);

    // Run where there is no data directory, with a context pointing at the server: the server takes it.
    const home = join(root, 'home');
    mkdirSync(join(home, 'cairn'), { recursive: true });
    writeFileSync(join(home, 'admin.key'), admin, { mode: 0o600 });
    writeFileSync(
      join(home, 'cairn', 'config.yaml'),
      `current-context: far\ncontexts:\n  far:\n    api-url: ${running.apiUrl}\n    operator: ${admin.split(':')[0]}\n    key-file: ${join(home, 'admin.key')}\n`,
      { mode: 0o600 },
    );
    const elsewhere = join(root, 'elsewhere.backup');
    const viaContext = await cairn(['backup', elsewhere], {
      ...BASE_ENV,
      XDG_CONFIG_HOME: home,
      CAIRN_DATA_DIR: join(root, 'no-data-here'),
    });
    expect(viaContext.out).toContain(`through the management API at ${running.apiUrl}`);
    expect(viaContext.code).toBe(0);
    expect(statSync(elsewhere).mode & 0o777).toBe(0o600);

    // The running server's directory cannot be restored over.
    const over = await cairn(['restore', file, '--force'], env);
    expect(over.code).toBe(5);
    expect(over.out).toContain(
      'is in use by a running Cairn: stop it (Ctrl-C or SIGTERM), then restore. Nothing was done.',
    );
    await stopShared();

    // A directory that holds a database is not replaced without --force.
    const occupied = await cairn(['restore', file], env);
    expect(occupied.code).toBe(5);
    expect(occupied.out).toContain(`The data directory ${original} is not empty. Nothing was done.`);

    const done = await cairn(['restore', file], { ...env, CAIRN_DATA_DIR: restored });
    expect(done.out).toContain(`Restored ${file} into ${restored}.`);
    expect(done.code).toBe(0);

    const again = await launch({ ...BASE_ENV, CAIRN_DATA_DIR: restored });
    try {
      expect(again.adminAuth).toBeUndefined(); // the admin came back with the data: no new first start
      await expectRestored(again.apiUrl, again.gatewayUrl, auth, populated);
    } finally {
      expect(await again.stop()).toBe(0);
    }
  });

  it('when the embedded start made its own S3 key, then a backup and that key file, kept apart, restore a wiped data directory whose S3 signatures verify; without the file the start refuses and makes no key', async () => {
    const parent = join(root, 'own-key');
    const dataDir = join(parent, 'pglite');
    const keyFile = join(parent, 's3-secret-keys');
    // No CAIRN_S3_SECRET_KEYS: the start makes its own key, beside the data directory.
    const env = { CAIRN_DATA_DIR: await migratedDataDir(dataDir), CAIRN_S3TOKENS_REQUIRE_SERVICE_TOKEN: 'false' };
    const first = await launch(env);
    const auth = first.adminAuth!;
    const file = join(root, 'own-key.backup');
    let populated;
    try {
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      populated = await populate(first.apiUrl, auth);
    } finally {
      expect(await first.stop()).toBe(0);
    }
    const taken = await cairn(['backup', file], env);
    expect(taken.code).toBe(0);
    // It names the one other thing to keep.
    expect(taken.out).toContain(`Keep the file ${keyFile} too, apart from it`);
    const kept = join(root, 'own-key.s3-secret-keys');
    copyFileSync(keyFile, kept);

    // The machine is lost: data directory and key file with it.
    rmSync(parent, { recursive: true, force: true });
    const restored = await cairn(['restore', file], env);
    expect(restored.code).toBe(0);
    // The restore says what the start will need, and where it goes.
    expect(restored.out).toContain(
      `Before cairn start: The embedded database in ${dataDir} holds 1 S3 credential(s) whose secret is sealed under key id 'embedded', the key in ${keyFile}, and that file is not there: put back the s3-secret-keys file kept with the backup (or from beside the old data directory) as ${keyFile}`,
    );

    // Started without it, it refuses with that sentence, and makes no key over the sealed secrets.
    const refused = await launch(env).then(
      () => 'started',
      (e: Error) => e.message,
    );
    expect(refused).toContain('Cairn did not start.');
    expect(refused).toContain(`and that file is not there: put back the s3-secret-keys file kept with the backup`);
    expect(refused).toContain('No new key was made');
    expect(existsSync(keyFile)).toBe(false);

    // With another key in its place, it refuses too.
    writeFileSync(keyFile, `embedded:${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    const otherKey = await launch(env).then(
      () => 'started',
      (e: Error) => e.message,
    );
    expect(otherKey).toContain(`and they do not open under the key in ${keyFile}, which is another key`);

    copyFileSync(kept, keyFile);
    const again = await launch(env);
    try {
      expect(readFileSync(keyFile, 'utf8')).toBe(readFileSync(kept, 'utf8'));
      await expectRestored(again.apiUrl, again.gatewayUrl, auth, populated);
    } finally {
      expect(await again.stop()).toBe(0);
    }
  });

  it('when no server runs, then cairn backup copies the data directory itself, and --force restores over a used one, keeping it aside', async () => {
    // The shared start's directory, once it is stopped (the first test stops it when it runs).
    await stopShared();
    const { dir, env, auth, populated } = shared;

    const file = join(root, 'direct.backup');
    const taken = await cairn(['backup', file], env);
    expect(taken.out).toContain(`from ${dir}`);
    expect(taken.code).toBe(0);

    // Not a backup at all: refused before anything is touched.
    const junk = join(root, 'junk');
    writeFileSync(junk, 'not a backup');
    const bad = await cairn(['restore', junk, '--force'], env);
    expect(bad.code).toBe(5);
    expect(bad.out).toContain('That file is not a backup of an embedded Cairn database');

    const forced = await cairn(['restore', file, '--force'], env);
    expect(forced.code).toBe(0);
    const aside = /The data directory it replaced is now (\S+);/.exec(forced.out)?.[1];
    expect(aside && existsSync(join(aside, 'PG_VERSION'))).toBe(true);

    const again = await launch(env);
    try {
      await expectRestored(again.apiUrl, again.gatewayUrl, auth, populated);
    } finally {
      expect(await again.stop()).toBe(0);
    }
  });
});
