import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSwiftDir, RingError, SwiftConfError, SwiftDirError } from '../src';
import { fixturePath } from './helpers/ring-bytes';

const CONF_0_1 = '[storage-policy:0]\nname = gold\ndefault = yes\n[storage-policy:1]\nname = silver\n';

describe('readSwiftDir', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'swift-dir-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const put = async (files: Record<string, string>): Promise<void> => {
    for (const [name, source] of Object.entries(files)) {
      if (source.startsWith('fixture:'))
        await copyFile(fixturePath('swift', source.slice('fixture:'.length)), join(dir, name));
      else await writeFile(join(dir, name), source);
    }
  };

  const failure = async (): Promise<unknown> =>
    readSwiftDir(dir).then(
      () => new Error('readSwiftDir succeeded'),
      (e: unknown) => e,
    );

  it('when the fixture swift dir is read, then each policy gets its object ring and account/container rings are ignored', async () => {
    const { policies, rings } = await readSwiftDir(fixturePath('swift'));
    expect(policies.map((p) => [p.index, p.name, p.isDefault, p.isDeprecated])).toEqual([
      [0, 'gold', true, false],
      [1, 'silver', false, false],
      [2, 'bronze', false, true],
    ]);
    expect(policies[2]?.aliases).toEqual(['cheap']);
    expect([...rings.keys()]).toEqual([0, 1, 2]);
    expect(rings.get(0)?.devices.map((d) => d.device)).toEqual(['sdb1', 'sdb2', 'sdb3']);
    expect(rings.get(1)?.devices.map((d) => d.device)).toEqual(['sdb2', 'sdb3', 'sdb4']);
    expect(rings.get(2)?.partPower).toBe(10);
    expect('assignments' in (rings.get(0) ?? {})).toBe(false);
  });

  it('when assignments are asked for, then every ring carries them', async () => {
    const { rings } = await readSwiftDir(fixturePath('swift'), { withAssignments: true });
    expect([...rings.values()].every((r) => 'assignments' in r)).toBe(true);
  });

  it('when a ring has no policy in swift.conf and a policy has no ring, then both are named together', async () => {
    await put({
      'swift.conf': CONF_0_1,
      'object.ring.gz': 'fixture:object.ring.gz',
      'object-2.ring.gz': 'fixture:object-2.ring.gz',
    });
    const error = await failure();
    expect(error).toBeInstanceOf(SwiftDirError);
    expect((error as SwiftDirError).problems).toEqual([
      'object-2.ring.gz: swift.conf has no storage policy 2',
      'policy 1 (silver) has no ring file object-1.ring.gz',
    ]);
    expect((error as SwiftDirError).message).toBe(
      `${dir}: object-2.ring.gz: swift.conf has no storage policy 2; policy 1 (silver) has no ring file object-1.ring.gz`,
    );
  });

  it('when swift.conf defines no policy, then Policy-0 needs object.ring.gz', async () => {
    await put({ 'swift.conf': '[swift-hash]\nswift_hash_path_suffix = x\n' });
    expect(((await failure()) as SwiftDirError).problems).toEqual([
      'policy 0 (Policy-0) has no ring file object.ring.gz',
    ]);
  });

  it('when a ring file has a name Swift never reads (object-0, object-01), then it is reported', async () => {
    await put({
      'swift.conf': CONF_0_1,
      'object.ring.gz': 'fixture:object.ring.gz',
      'object-1.ring.gz': 'fixture:object-1.ring.gz',
      'object-0.ring.gz': 'fixture:object.ring.gz',
      'object-01.ring.gz': 'fixture:object-1.ring.gz',
    });
    expect(((await failure()) as SwiftDirError).problems).toEqual([
      "object-0.ring.gz: Swift never reads this file (policy 0's ring is object.ring.gz)",
      "object-01.ring.gz: Swift never reads this file (policy 1's ring is object-1.ring.gz)",
    ]);
  });

  it('when other files sit in the dir (builders, backups), then they are ignored', async () => {
    await put({
      'swift.conf': CONF_0_1,
      'object.ring.gz': 'fixture:object.ring.gz',
      'object-1.ring.gz': 'fixture:object-1.ring.gz',
      'object.builder': 'not read',
      'object-1.ring.gz.bak': 'not read',
    });
    expect([...(await readSwiftDir(dir)).rings.keys()]).toEqual([0, 1]);
  });

  it('when a ring is corrupt, then its RingError comes through', async () => {
    await put({ 'swift.conf': CONF_0_1, 'object.ring.gz': 'fixture:object.ring.gz', 'object-1.ring.gz': 'garbage' });
    expect(await failure()).toEqual(new RingError('object-1.ring.gz', 'not gzip data'));
  });

  it('when swift.conf is missing or invalid, then a SwiftConfError names its path', async () => {
    const missing = await failure();
    expect(missing).toBeInstanceOf(SwiftConfError);
    expect((missing as SwiftConfError).message).toBe(`${join(dir, 'swift.conf')}: cannot read (ENOENT)`);
    await put({ 'swift.conf': '[storage-policy:0]\nname = gold\n[storage-policy:1]\nname = silver\n' });
    expect(await failure()).toEqual(
      new SwiftConfError(
        join(dir, 'swift.conf'),
        'no default policy: with 2 policies, exactly one needs "default = yes"',
      ),
    );
  });
});
