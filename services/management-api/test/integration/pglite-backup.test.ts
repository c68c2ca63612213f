import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { createDatabase, pgliteStartParams } from '../../src/db/database';
import { backupDataDir, restoreDataDir } from '../../src/db/pglite-backup';
import { migratedPgliteArchive } from '../support/migrated-template';
import { notOwnerOnly } from '../support/file-modes';

/** The archive's members as GNU tar lists them: "<mode string> <name>" (stderr, e.g. its warnings, apart). */
function members(archive: Uint8Array, dir: string): { list: string[]; warnings: string } {
  const file = join(dir, `listed-${Math.random().toString(36).slice(2)}.tar.gz`);
  writeFileSync(file, archive);
  const out = execFileSync('tar', ['-tvzf', file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const warnings = execFileSync('sh', ['-c', `tar -tzf '${file}' 2>&1 >/dev/null`], { encoding: 'utf8' });
  const list = out
    .trim()
    .split('\n')
    .map((line) => {
      const fields = line.trim().split(/\s+/);
      return `${fields[0]} ${fields.slice(5).join(' ')}`;
    });
  return { list, warnings };
}

async function migrationsIn(dataDir: string): Promise<number> {
  const db = createDatabase({ dataDir });
  try {
    const [{ count }] = (await db('knex_migrations').count({ count: '*' })) as [{ count: string | number }];
    return Number(count);
  } finally {
    await db.destroy();
  }
}

describe('backup and restore of an embedded data directory', () => {
  let root: string;
  let umask: number;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'cairn-pglite-backup-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  // Under the usual umask, where PGlite left everything readable by all.
  beforeEach(() => {
    umask = process.umask(0o022);
  });
  afterEach(() => process.umask(umask));

  it("when a data directory is backed up, then the archive's members are relative and owner-only, and it restores into an owner-only directory", async () => {
    // The source is the migrated template unpacked as it is: `tar -x` needs no database started.
    const source = join(root, 'source');
    mkdirSync(source);
    writeFileSync(join(root, 'template.tar.gz'), await migratedPgliteArchive());
    execFileSync('tar', ['-xzf', join(root, 'template.tar.gz'), '-C', source]);
    const migrations = await migrationsIn(source);
    expect(migrations).toBeGreaterThan(0);

    const archive = new Uint8Array(await (await backupDataDir(source)).arrayBuffer());
    const { list, warnings } = members(archive, root);
    expect(list).toContain('-rw------- PG_VERSION');
    expect(list).toContain('drwx------ base');
    expect(list.filter((m) => !/^(-rw-------|drwx------) [^/.]/.test(m))).toEqual([]);
    expect(warnings).toBe('');

    // `tar -x` unpacks it where it is run, as any archive.
    const unpacked = join(root, 'unpacked');
    mkdirSync(unpacked);
    writeFileSync(join(root, 'backup.tar.gz'), archive);
    execFileSync('tar', ['-xzf', join(root, 'backup.tar.gz'), '-C', unpacked]);
    expect(readdirSync(unpacked)).toContain('PG_VERSION');

    const restored = join(root, 'restored');
    await restoreDataDir(restored, archive, false);
    expect(notOwnerOnly(restored)).toEqual([]);
    expect(await migrationsIn(restored)).toBe(migrations);
  });

  it('when an archive written by an earlier release (members named from the root) is restored, then it opens', async () => {
    // What `cairn backup` wrote before its members were made relative: PGlite's own dump.
    const pg = await PGlite.create({
      loadDataDir: new Blob([new Uint8Array(await migratedPgliteArchive())]),
      startParams: pgliteStartParams(),
    });
    let old: Uint8Array;
    try {
      old = new Uint8Array(await (await pg.dumpDataDir('gzip')).arrayBuffer());
    } finally {
      await pg.close();
    }
    expect(members(old, root).warnings).toContain("Removing leading `/' from member names");

    const restored = join(root, 'from-old');
    await restoreDataDir(restored, old, false);
    expect(notOwnerOnly(restored)).toEqual([]);
    expect(await migrationsIn(restored)).toBeGreaterThan(0);
  });
});
