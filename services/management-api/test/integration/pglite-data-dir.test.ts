import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase, migrateLatest } from '../../src/db/database';

describe('embedded PGlite in a data directory', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cairn-pglite-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('when the directory is new, then it is set up once and what is written survives reopening it', async () => {
    const dataDir = join(dir, 'data');
    const first = createDatabase({ dataDir });
    expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true);
    try {
      await migrateLatest(first);
      await first('clusters').insert({ name: 'kept', uuid: '00000000-0000-4000-8000-000000000001', auth_url: 'http://a.example/auth/v1.0', storage_url: 'http://a.example/v1' });
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
    expect(() => createDatabase({ dataDir: dir })).toThrow(`could not set up the PGlite data directory ${dir}: it is not empty but holds no database`);
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
      expect(await migrateLatest(db)).not.toEqual([]);
    } finally {
      await db.destroy();
    }
    expect(readdirSync(dir)).toEqual(['data']);
  });
});
