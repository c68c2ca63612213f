import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { CAIRN_VERSION } from '../src';

const ROOT = join(__dirname, '..', '..', '..');
const versionOf = (dir: string) =>
  (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: string }).version;

describe('CAIRN_VERSION', () => {
  it('when read, then it is a semantic version', () => {
    expect(CAIRN_VERSION).toMatch(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
  });

  it('when any workspace package carries a version, then it is the same one (a release bumps them together)', () => {
    const dirs = [
      ROOT,
      ...['packages', 'services'].flatMap((g) => readdirSync(join(ROOT, g)).map((n) => join(ROOT, g, n))),
      join(ROOT, 'test-e2e'),
      join(ROOT, 'bench'),
    ];
    const versions = dirs
      .filter((d) => existsSync(join(d, 'package.json')))
      .map((d) => [d.slice(ROOT.length) || '/', versionOf(d)]);
    expect(versions).toEqual(versions.map(([d]) => [d, CAIRN_VERSION]));
  });
});
