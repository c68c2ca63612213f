import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildRing, removeDir } from './swift-ring';
import { cairn } from '../support/processes';
import { ADMIN_AUTH, ADMIN_AUTH_NAME, ADMIN_KEY, startStack, type Stack } from '../support/stack';

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

    // The recon checks run for real: the ring's nodes (10.0.0.x) do not answer.
    const refused = await cairn(['rings', 'apply', planFile, '--swift-dir', dir, '--recon-timeout', '300'], {});
    expect(refused.code).toBe(5);
    expect(refused.stderr).toMatch(/^cairn: step 1 not applied: .*10\.0\.0\.1:6200/);

    const applied = await cairn(['rings', 'apply', planFile, '--swift-dir', dir, '--skip-recon-checks'], {});
    expect(applied).toMatchObject({ code: 0 });
    expect(applied.stdout).toMatch(new RegExp(`Applied step 1: ${plan.steps[0]!.parts_moved} partitions moved`));
  });

  describe('with the management API', () => {
    let stack: Stack;
    let env: Record<string, string>;
    beforeAll(async () => {
      stack = await startStack({ database: 'postgres' });
      env = { CAIRN_API_URL: stack.apiUrl, CAIRN_API_KEY: `${ADMIN_AUTH_NAME}:${ADMIN_KEY}` };
    });
    afterAll(() => stack.close());

    it('when planned and applied with --cluster, then the plan is stored with the cluster and the ring becomes its current version, both named after the plan file', async () => {
      const planFile = join(dir, 'grow-d3.json');
      const planned = await cairn(
        [
          ...['rings', 'plan', '--swift-dir', dir, '--set-weight', 'd3:80', '--seed', '5', '--save', planFile],
          ...['--cluster', 'default'],
        ],
        env,
      );
      expect(planned.code).toBe(0);
      expect(planned.stdout).toContain('Plan 1 (grow-d3) is stored with cluster 1: /api/v1/clusters/1/ring_plans/1/');
      const saved = JSON.parse(await readFile(planFile, 'utf8')) as Record<string, unknown>;
      const stored = (await (
        await fetch(`${stack.apiUrl}/api/v1/clusters/1/ring_plans/1/`, { headers: { Authorization: ADMIN_AUTH } })
      ).json()) as Record<string, unknown>;
      expect(stored).toMatchObject({ name: 'grow-d3', seed: 5, swift_version: saved.swift_version, plan: saved });
      // A saved plan file reaches the API on its own too, under another name.
      const pushed = await cairn(
        ['rings', 'plans', 'push', planFile, '--name', 'grow-d3-again', '--cluster', '1'],
        env,
      );
      expect(pushed).toMatchObject({ stderr: '', code: 0 });
      expect(pushed.stdout).toContain('Plan 2 (grow-d3-again) is stored');
      const applied = await cairn(
        ['rings', 'apply', planFile, '--swift-dir', dir, '--skip-recon-checks', '--cluster', 'default'],
        env,
      );
      expect(applied).toMatchObject({ code: 0 });
      const md5 = createHash('md5')
        .update(await readFile(join(dir, 'object.ring.gz')))
        .digest('hex');
      expect(applied.stdout).toContain(`object.ring.gz is version 1 of cluster 1, now current (md5 ${md5})`);
      const versions = (await (
        await fetch(`${stack.apiUrl}/api/v1/clusters/1/rings/`, { headers: { Authorization: ADMIN_AUTH } })
      ).json()) as { objects: Array<Record<string, unknown>> };
      expect(versions.objects).toEqual([
        expect.objectContaining({ ring: 'object', version: 1, current: true, md5, plan_id: 'grow-d3', plan_step: 1 }),
      ]);
      // The plan as apply left it (step 1 applied, the next computed) is stored again under its name.
      expect(applied.stdout).toContain('Plan 3 (grow-d3) is stored with cluster 1: /api/v1/clusters/1/ring_plans/3/');
      const restored = (await (
        await fetch(`${stack.apiUrl}/api/v1/clusters/1/ring_plans/3/`, { headers: { Authorization: ADMIN_AUTH } })
      ).json()) as { plan: { applied: unknown[] } };
      expect(restored.plan).toEqual(JSON.parse(await readFile(planFile, 'utf8')));
      expect(restored.plan.applied).toHaveLength(1);
    });

    it('when the plans are listed, then every stored plan of the cluster is there, newest first, with its name and steps', async () => {
      const listed = await cairn(['rings', 'plans', 'list', '--cluster', 'default', '-o', 'json'], env);
      expect(listed).toMatchObject({ code: 0, stderr: '' });
      const rows = JSON.parse(listed.stdout) as Array<{ id: string; name: string; ring: string; seed: number }>;
      expect(rows.map((r) => [r.id, r.name, r.ring, r.seed])).toEqual([
        ['3', 'grow-d3', 'object', 5],
        ['2', 'grow-d3-again', 'object', 5],
        ['1', 'grow-d3', 'object', 5],
      ]);
      const table = await cairn(['rings', 'plans', 'list', '--cluster', '1'], env);
      const lines = table.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^ID +NAME +RING +SEED +SWIFT_VERSION .*STEPS_COMPUTED/);
      expect(lines.slice(1).map((l) => l.split(/ +/).slice(0, 2))).toEqual([
        ['3', 'grow-d3'],
        ['2', 'grow-d3-again'],
        ['1', 'grow-d3'],
      ]);
    });
  });

  it('when a device is unknown, then the table command exits 5 with the sentence', async () => {
    const r = await cairn(['rings', 'plan', '--swift-dir', dir, '--remove', 'd42'], {});
    expect(r).toMatchObject({ code: 5, stdout: '' });
    expect(r.stderr).toBe("cairn: --remove 'd42': no device in the builder matches it.\n");
  });
});
