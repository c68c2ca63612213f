/**
 * @slow: three PGlite data directories set up from nothing (initdb) (jest.sequencer.js starts it first)
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase, migrateLatest } from '../../src/db/database';
import type { ModesRestricted } from '../../src/db/data-dir-modes';
import { restoreDataDir } from '../../src/db/pglite-backup';
import { chmodTree, notOwnerOnly } from '../support/file-modes';
import { migratedPgliteArchive } from '../support/migrated-template';

/** A pid that ran a moment ago and is gone now. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

const lockOf = (pid: number, host = hostname()) =>
  JSON.stringify({ pid, hostname: host, since: '2026-01-01T00:00:00.000Z' });

describe('embedded PGlite in a data directory', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cairn-pglite-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  // Setting up a directory (initdb) and migrating it take seconds each: a test about what an
  // existing migrated directory does starts from a copy of one, restored once from the migrated
  // template's archive. Only the tests about a new directory run initdb, and only the first also
  // runs every migration on it.
  let template: string;
  beforeAll(async () => {
    template = mkdtempSync(join(tmpdir(), 'cairn-pglite-template-'));
    await restoreDataDir(join(template, 'data'), await migratedPgliteArchive(), false);
  });
  afterAll(() => rmSync(template, { recursive: true, force: true }));
  const setUpCopy = () => cpSync(join(template, 'data'), join(dir, 'data'), { recursive: true });

  it('when the directory is new, then it is set up once and what is written survives reopening it', async () => {
    const dataDir = join(dir, 'data');
    const first = createDatabase({ dataDir });
    expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true);
    try {
      await migrateLatest(first);
      await first('clusters').insert({
        name: 'kept',
        uuid: '00000000-0000-4000-8000-000000000001',
        auth_url: 'http://a.example/auth/v1.0',
        storage_url: 'http://a.example/v1',
      });
    } finally {
      await first.destroy();
    }
    const again = createDatabase({ dataDir });
    try {
      expect(await migrateLatest(again)).toEqual([]);
      expect(await again('clusters').pluck('name')).toEqual(['kept']);
    } finally {
      await again.destroy();
    }
  });

  it('when the directory holds files but no database, then opening throws, names the directory and leaves the files', () => {
    writeFileSync(join(dir, 'global'), 'not a directory');
    expect(() => createDatabase({ dataDir: dir })).toThrow(
      `could not set up the PGlite data directory ${dir}: it is not empty but holds no database`,
    );
    expect(readdirSync(dir)).toEqual(['global']);
  });

  it('when a set-up was killed half-way, then what it left is thrown away and the next start sets the directory up afresh', async () => {
    // initdb writes PG_VERSION early: a killed set-up leaves a staging directory that has one.
    const dataDir = join(dir, 'data');
    const staging = join(dir, '.data.setting-up');
    mkdirSync(staging);
    writeFileSync(join(staging, 'PG_VERSION'), '17\n');
    const db = createDatabase({ dataDir });
    try {
      expect(existsSync(staging)).toBe(false);
      // A new, working database: nothing in it yet (no migration recorded), and it takes writes.
      expect((await db.raw("SELECT to_regclass('knex_migrations') AS t")).rows).toEqual([{ t: null }]);
      await db.raw('CREATE TABLE written (name text PRIMARY KEY)');
      await db('written').insert({ name: 'afresh' });
      expect(await db('written').pluck('name')).toEqual(['afresh']);
    } finally {
      await db.destroy();
    }
    expect(readdirSync(dir)).toEqual(['data']);
  });

  describe('its modes', () => {
    // The umask a login shell usually has, under which PGlite left everything readable by all.
    let umask: number;
    beforeEach(() => {
      umask = process.umask(0o022);
    });
    afterEach(() => process.umask(umask));

    it('when a new directory is set up under umask 022, then every directory is 0700 and every file 0600, what PGlite writes later (WAL) included', async () => {
      const dataDir = join(dir, 'data');
      const told: ModesRestricted[] = [];
      const db = createDatabase({ dataDir, onModesRestricted: (_, changed) => told.push(changed) });
      try {
        const walBefore = readdirSync(join(dataDir, 'pg_wal')).filter((f) => /^[0-9A-F]{24}$/.test(f));
        // A table (its files), writes, a new WAL segment, more writes, and a checkpoint: files
        // PGlite creates while open. What they are for does not matter here, so no migrations.
        await db.raw('CREATE TABLE written (name text PRIMARY KEY)');
        await db('written').insert({ name: 'modes' });
        await db.raw('SELECT pg_switch_wal()');
        await db.raw('CREATE TABLE later (n int)');
        await db.raw('INSERT INTO later SELECT generate_series(1, 1000)');
        await db.raw('CHECKPOINT');
        const walAfter = readdirSync(join(dataDir, 'pg_wal')).filter((f) => /^[0-9A-F]{24}$/.test(f));
        const newWal = walAfter.filter((f) => !walBefore.includes(f));
        expect(newWal).not.toEqual([]);
        for (const f of newWal) expect(statSync(join(dataDir, 'pg_wal', f)).mode & 0o777).toBe(0o600);
        // While open, every directory is 0700 (no one else can enter it), and no file is writable
        // by others; PGlite's fopen'ed files (pg_internal.init) are 0644 until it closes.
        const loose = notOwnerOnly(dataDir);
        expect(loose.filter((e) => !/^644 .*\/pg_internal\.init$/.test(e))).toEqual([]);
      } finally {
        await db.destroy();
      }
      expect(notOwnerOnly(dataDir)).toEqual([]);
      // A new directory is made so from the start: nothing to report.
      expect(told).toEqual([]);
    });

    it("when an existing directory is open to other users, then opening makes it its owner's only and reports what it changed", async () => {
      const dataDir = join(dir, 'data');
      setUpCopy();
      chmodTree(dataDir, 0o755, 0o666);
      const directories = notOwnerOnly(dataDir).filter((e) => e.startsWith('755 ')).length;
      const files = notOwnerOnly(dataDir).filter((e) => e.startsWith('666 ')).length;
      expect(directories).toBeGreaterThan(10);
      expect(files).toBeGreaterThan(100);

      const told: Array<[string, ModesRestricted]> = [];
      const again = createDatabase({ dataDir, onModesRestricted: (d, changed) => told.push([d, changed]) });
      try {
        expect(told).toEqual([[dataDir, { directories, files }]]);
        expect(await migrateLatest(again)).toEqual([]);
        expect(notOwnerOnly(dataDir).filter((e) => !/^644 .*\/pg_internal\.init$/.test(e))).toEqual([]);
      } finally {
        await again.destroy();
      }
      expect(notOwnerOnly(dataDir)).toEqual([]);
    });
  });

  describe('its lock', () => {
    it('when the directory is open in this process, then a second open is refused until the first is closed', async () => {
      const dataDir = join(dir, 'data');
      setUpCopy();
      const first = createDatabase({ dataDir });
      try {
        expect(await migrateLatest(first)).toEqual([]);
        expect(JSON.parse(readFileSync(`${dataDir}.lock`, 'utf8'))).toMatchObject({
          pid: process.pid,
          hostname: hostname(),
        });
        expect(() => createDatabase({ dataDir })).toThrow(
          `The embedded database in ${dataDir} is in use by process ${process.pid}`,
        );
        // The same directory by another path is the same database.
        symlinkSync(dataDir, join(dir, 'link'));
        expect(() => createDatabase({ dataDir: join(dir, 'link') })).toThrow(
          `The embedded database in ${dataDir} is in use`,
        );
      } finally {
        await first.destroy();
      }
      expect(existsSync(`${dataDir}.lock`)).toBe(false);
      const again = createDatabase({ dataDir });
      try {
        expect(await migrateLatest(again)).toEqual([]);
      } finally {
        await again.destroy();
      }
    });

    it('when a live process on this host holds it, then opening is refused, and the lock is left alone', async () => {
      const dataDir = join(dir, 'data');
      const holder = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
      try {
        writeFileSync(`${dataDir}.lock`, lockOf(holder.pid!));
        expect(() => createDatabase({ dataDir })).toThrow(
          `The embedded database in ${dataDir} is in use by process ${holder.pid} (since 2026-01-01T00:00:00.000Z), and it admits one process at a time. Nothing was done. Stop that process first`,
        );
        expect(readFileSync(`${dataDir}.lock`, 'utf8')).toBe(lockOf(holder.pid!));
      } finally {
        holder.kill('SIGKILL');
      }
    });

    it('when another host holds it, then opening is refused and says which file to remove once that host is done', () => {
      const dataDir = join(dir, 'data');
      writeFileSync(`${dataDir}.lock`, lockOf(1, 'elsewhere.example'));
      expect(() => createDatabase({ dataDir })).toThrow(`is in use by process 1 on host elsewhere.example`);
      expect(() => createDatabase({ dataDir })).toThrow(`if it no longer uses this directory, remove ${dataDir}.lock.`);
    });

    it('when the file names no holder, then opening is refused and says to remove it', () => {
      const dataDir = join(dir, 'data');
      writeFileSync(`${dataDir}.lock`, '');
      expect(() => createDatabase({ dataDir })).toThrow(
        `is locked by ${dataDir}.lock, which does not say which process holds it`,
      );
    });

    it.each([
      ['its process is gone', () => lockOf(deadPid())],
      ['its pid is this process, which never took it (a pid reused after a restart)', () => lockOf(process.pid)],
      [
        'its pid now runs another process (started later than the holder)',
        () => JSON.stringify({ ...JSON.parse(lockOf(process.ppid)), processStart: '1' }),
      ],
    ])('when %s, then the lock is stale and taken over', async (_, content) => {
      const dataDir = join(dir, 'data');
      setUpCopy();
      writeFileSync(`${dataDir}.lock`, content());
      // A take-over guard left by a process killed half-way through one is stale too.
      writeFileSync(`${dataDir}.lock.takeover`, lockOf(deadPid()));
      const db = createDatabase({ dataDir });
      try {
        expect(await migrateLatest(db)).toEqual([]);
        expect(JSON.parse(readFileSync(`${dataDir}.lock`, 'utf8'))).toMatchObject({ pid: process.pid });
        expect(existsSync(`${dataDir}.lock.takeover`)).toBe(false);
      } finally {
        await db.destroy();
      }
    });

    it('when another process is taking a stale lock over at this moment, then opening is refused', () => {
      const dataDir = join(dir, 'data');
      writeFileSync(`${dataDir}.lock`, lockOf(deadPid()));
      writeFileSync(`${dataDir}.lock.takeover`, lockOf(process.ppid));
      expect(() => createDatabase({ dataDir })).toThrow(`is in use by process ${process.ppid}`);
    });
  });
});
