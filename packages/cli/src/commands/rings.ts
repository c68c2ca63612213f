import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CommanderError, type Command } from 'commander';
import { errors } from '@cairn/domain/errors';
import { isRingName, RING_NAME_RULE } from '@cairn/domain/rings';
import { apiBinary, apiError, jsonOf, type ApiTarget } from '../api-client';
import { listAll } from '../remote/list';
import { render, withOutput, type OutputOptions } from '../remote/output';
import { call } from '../remote/resource';
import { askYes, onTerminal } from '../remote/secret';
import { clusterIdOf, collect, targetOf } from '../remote/session';
import { parseInterval, runRounds } from '../collector-loop';
import type { CheckStepSafety } from '@cairn/rings';
import { addRingPlanCommands, planNameOf, type PlanStore, type RingPush } from './rings-plan';

/**
 * `cairn rings …`: the cluster's ring versions in the management API (push, versions, rollback)
 * and, on every storage and proxy node, `pull`, which installs the current ones.
 */

const COLUMNS = [
  'ring',
  'version',
  'current',
  'md5',
  'part_power',
  'replicas',
  'device_count',
  'plan_id',
  'plan_step',
  'created_by',
  'created_at',
];

function ringName(value: string): string {
  if (!isRingName(value)) throw errors.invalidInput(`'${value}' is not a Swift ring name: give ${RING_NAME_RULE}.`);
  return value;
}

const ringsPath = (clusterId: number) => `/api/v1/clusters/${clusterId}/rings/`;
const plansPath = (clusterId: number) => `/api/v1/clusters/${clusterId}/ring_plans/`;

const PLAN_COLUMNS = [
  'id',
  'name',
  'ring',
  'seed',
  'swift_version',
  'computed_at',
  'parts_moved',
  'parts_moved_pct',
  'bytes_to_move',
  'device_count',
  'steps_computed',
  'created_by',
  'created_at',
];

/** `cairn rings plans push|list`: plans kept in the management API for the console's What-if panel. */
function addPlansCommands(rings: Command): void {
  const plans = rings
    .command('plans')
    .description("ring plans kept with a cluster in the management API, for the console's What-if panel");
  plans
    .command('push')
    .description(
      "store a plan file cairn rings plan --save wrote in the cluster's ring plans (what plan --cluster does at once)",
    )
    .argument('<plan>', 'the plan file')
    .option('--cluster <id|name>', "the cluster (default: the context's)")
    .option('--name <name>', "the stored plan's name (default: the file's name without .json)")
    .action(async (file: string, flags: { cluster?: string; name?: string }, cmd: Command) => {
      const text = await readFile(file, 'utf8').catch((e: NodeJS.ErrnoException) => {
        throw errors.invalidInput(`Cannot read the plan ${file} (${e.code ?? e.message}); nothing was stored.`);
      });
      let plan: unknown;
      try {
        plan = JSON.parse(text);
      } catch {
        throw errors.invalidInput(`${file} is not JSON: give a plan file cairn rings plan --save wrote.`);
      }
      process.stdout.write(
        await storePlan(cmd, {
          cluster: flags.cluster,
          name: flags.name ?? planNameOf(file),
          plan: plan as PlanStore['plan'],
        }),
      );
    });
  withOutput(plans.command('list').description("list a cluster's stored ring plans, newest first"))
    .option('--cluster <id|name>', "the cluster (default: the context's)")
    .action(async (flags: OutputOptions & { cluster?: string }, cmd: Command) => {
      const target = await targetOf(cmd);
      const id = await clusterIdOf(target, flags.cluster);
      process.stdout.write(await render(await listAll(target, plansPath(id), [], undefined, 20), PLAN_COLUMNS, flags));
    });
}

/** Stores a computed plan with the cluster; says where it is. */
async function storePlan(cmd: Command, store: PlanStore): Promise<string> {
  const target = await targetOf(cmd);
  const id = await clusterIdOf(target, store.cluster);
  const body = { ...(store.name === undefined ? {} : { name: store.name }), plan: store.plan };
  const json = await call(target, 'POST', plansPath(id), 'storing the plan', 201, body);
  return `Plan ${String(json.id)}${store.name === undefined ? '' : ` (${store.name})`} is stored with cluster ${id}: ${String(json.resource_uri)}\n`;
}

export function registerRings(program: Command): Command {
  const rings = program
    .command('rings')
    .description(
      "a cluster's Swift rings: plan and apply changes with Swift's builder, keep every version in the management API, pull them on the nodes",
    );
  // The recon checker (and with it the Swift client code) loads when apply calls it.
  const checkStepSafety: CheckStepSafety = async (...args) =>
    (await import('@cairn/swift-cluster')).checkStepSafety(...args);
  addRingPlanCommands(rings, { checkStepSafety, pushRing, storePlan });
  addPlansCommands(rings);

  rings
    .command('push')
    .description(
      "upload <swift-dir>/<ring>.ring.gz as the ring's new current version (the same bytes again change nothing)",
    )
    .option('--cluster <id|name>', "the cluster (default: the context's)")
    .requiredOption('--swift-dir <dir>', 'where the ring is (e.g. /etc/swift)')
    .requiredOption('--ring <name>', "'account', 'container', 'object' or 'object-<n>'")
    .option('--plan-id <id>', 'the plan the ring was applied from')
    .option('--step <n>', "that plan's step")
    .option('--plan <file>', 'the plan JSON to keep with the version')
    .action(
      async (
        flags: { cluster?: string; swiftDir: string; ring: string; planId?: string; step?: string; plan?: string },
        cmd: Command,
      ) => {
        const plan = flags.plan === undefined ? undefined : (await readFile(flags.plan)).toString('base64');
        process.stdout.write(await pushRing(cmd, flags, plan));
      },
    );

  withOutput(rings.command('versions').description("list a cluster's ring versions, oldest first"))
    .option('--cluster <id|name>', "the cluster (default: the context's)")
    .option('--ring <name>', 'only this ring')
    .action(async (flags: OutputOptions & { cluster?: string; ring?: string }, cmd: Command) => {
      const target = await targetOf(cmd);
      const id = await clusterIdOf(target, flags.cluster);
      const params: [string, string][] = flags.ring ? [['ring', ringName(flags.ring)]] : [];
      process.stdout.write(await render(await listAll(target, ringsPath(id), params), COLUMNS, flags));
    });

  rings
    .command('rollback')
    .description('make the version before the current one current again (nodes install it at their next pull)')
    .option('--cluster <id|name>', "the cluster (default: the context's)")
    .requiredOption('--ring <name>', 'the ring')
    .option('-y, --yes', 'roll back without asking (for scripts)')
    .action(async (flags: { cluster?: string; ring: string; yes?: boolean }, self: Command) => {
      const ring = ringName(flags.ring);
      if (!flags.yes && !onTerminal())
        self.error(
          "error: 'rings rollback' asks for confirmation, and standard input is not a terminal to ask on: add --yes to roll back without asking.",
          { exitCode: 2, code: 'cairn.confirmationRequired' },
        );
      const target = await targetOf(self);
      const id = await clusterIdOf(target, flags.cluster);
      if (!flags.yes) {
        const [current] = await listAll(target, ringsPath(id), [
          ['ring', ring],
          ['current', 'true'],
        ]);
        if (!current) throw errors.notFound(`Cluster ${id} has no ring '${ring}'.`);
        const question = `Roll back ring '${ring}' of cluster ${id} from version ${String(current.version)} to the one before? [y/N] `;
        if (!(await askYes(question))) {
          process.stderr.write('Nothing was rolled back.\n');
          throw new CommanderError(2, 'cairn.notConfirmed', 'not confirmed');
        }
      }
      const now = await call(target, 'POST', `${ringsPath(id)}${ring}/rollback/`, `rolling back ${ring}`, 200);
      process.stdout.write(
        `${ring}.ring.gz of cluster ${id} is back at version ${String(now.version)} (md5 ${String(now.md5)})\n`,
      );
    });

  rings
    .command('pull')
    .description(
      "install the cluster's current rings into the swift dir, each only when its md5 changed and it belongs to this node's cluster; with --interval, repeat (SIGTERM or SIGINT then exits 0)",
    )
    .option('--cluster <id|name>', "this node's cluster (default: the context's; required one way or the other)")
    .requiredOption('--swift-dir <dir>', 'where Swift reads its rings (e.g. /etc/swift)')
    .option('--ring <name>', 'only this ring (repeatable; default: every ring the API has for the cluster)', collect)
    .option('--interval <seconds>', 'repeat every so many seconds')
    .action(async (flags: { cluster?: string; swiftDir: string; ring?: string[]; interval?: string }, cmd: Command) =>
      ringsPull(flags, cmd),
    );
  return rings;
}

async function ringsPull(
  flags: { cluster?: string; swiftDir: string; ring?: string[]; interval?: string },
  cmd: Command,
): Promise<void> {
  const interval = parseInterval(flags.interval);
  const names = (flags.ring ?? []).map(ringName);
  const { pullOnce } = await import('../rings/pull');
  const target: ApiTarget = await targetOf(cmd);
  const clusterId = await clusterIdOf(target, flags.cluster);
  const round = async (signal?: AbortSignal) => {
    const outcomes = await pullOnce({ target, clusterId, swiftDir: flags.swiftDir, rings: names, signal });
    if (outcomes.length === 0)
      process.stdout.write(`${new Date().toISOString()} cluster ${clusterId} has no ring in the API yet\n`);
    for (const o of outcomes)
      process.stdout.write(
        `${new Date().toISOString()} ${o.ring}.ring.gz: ${o.outcome === 'installed' ? 'installed' : 'unchanged at'} version ${o.version} (md5 ${o.md5})\n`,
      );
  };
  // On a schedule, like the collectors: a failed round is reported and the next one still runs.
  return runRounds(interval, round);
}

/** Uploads `<swiftDir>/<ring>.ring.gz` as the cluster's new current version; says what became of it. */
async function pushRing(cmd: Command, push: RingPush, planBase64?: string): Promise<string> {
  const ring = ringName(push.ring);
  const target = await targetOf(cmd);
  const id = await clusterIdOf(target, push.cluster);
  const path = join(push.swiftDir, `${ring}.ring.gz`);
  const bytes = await readFile(path).catch((e: NodeJS.ErrnoException) => {
    throw errors.invalidInput(`Cannot read the ring ${path} (${e.code ?? e.message}); nothing was pushed.`);
  });
  const headers: Record<string, string> = {};
  if (push.planId !== undefined) headers['X-Cairn-Plan-Id'] = push.planId;
  if (push.step !== undefined) headers['X-Cairn-Plan-Step'] = push.step;
  if (planBase64 !== undefined) headers['X-Cairn-Plan'] = planBase64;
  const r = await apiBinary(target, 'POST', `${ringsPath(id)}${ring}/`, { body: bytes, headers }, 0);
  const json = jsonOf(r.bytes) as Record<string, unknown>;
  if (r.status !== 201 && r.status !== 200) throw apiError(`pushing ${ring}.ring.gz`, { status: r.status, json });
  return r.status === 201
    ? `${ring}.ring.gz is version ${String(json.version)} of cluster ${id}, now current (md5 ${String(json.md5)})\n`
    : `${ring}.ring.gz is already the current version ${String(json.version)} of cluster ${id}; nothing changed\n`;
}
