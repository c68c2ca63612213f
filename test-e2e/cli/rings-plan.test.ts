import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildRing, removeDir } from '../../packages/rings/test/helpers/swift-ring';
import { cairn } from '../support/processes';

// The built CLI (dist/) finds the package's Python wrapper and Swift through /usr/bin/python3.
jest.setTimeout(60_000);

describe('cairn rings plan and apply', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await buildRing();
  });
  afterAll(() => removeDir(dir));

  it('when planned with -o json and --save, then it prints the plan and apply --skip-recon-checks carries out step 1', async () => {
    const planFile = join(dir, 'plan.json');
    const planned = await cairn(
      ['rings', 'plan', '--swift-dir', dir, '--set-weight', 'd2:80', '--seed', '4', '-o', 'json', '--save', planFile],
      {},
    );
    expect(planned).toMatchObject({ code: 0, stderr: '' });
    const plan = JSON.parse(planned.stdout) as { seed: number; steps: Array<{ parts_moved: number }> };
    expect(plan.seed).toBe(4);
    expect(JSON.parse(await readFile(planFile, 'utf8'))).toEqual(plan);

    const refused = await cairn(['rings', 'apply', planFile, '--swift-dir', dir], {});
    expect(refused.code).toBe(5);
    expect(refused.stderr).toMatch(/^cairn: step 1 of \d+ not applied: .*--skip-recon-checks/);

    const applied = await cairn(['rings', 'apply', planFile, '--swift-dir', dir, '--skip-recon-checks'], {});
    expect(applied).toMatchObject({ code: 0 });
    expect(applied.stdout).toMatch(
      new RegExp(`Applied step 1 of \\d+: ${plan.steps[0]!.parts_moved} partitions moved`),
    );
  });

  it('when a device is unknown, then the table command exits 5 with the sentence', async () => {
    const r = await cairn(['rings', 'plan', '--swift-dir', dir, '--remove', 'd42'], {});
    expect(r).toMatchObject({ code: 5, stdout: '' });
    expect(r.stderr).toBe("cairn: --remove 'd42': no device in the builder matches it.\n");
  });
});
