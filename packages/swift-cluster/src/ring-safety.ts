import { types } from 'node:util';
import { ReconError } from './errors';
import { mapConcurrent } from './pool';
import { fetchDiskUsage, reconBaseUrl, type DiskUsage, type ReconNode } from './recon';
import {
  fetchReplication,
  fetchRingMd5s,
  fetchUnmounted,
  type ReplicationReport,
  type ReplicationType,
  type UnmountedDevice,
} from './recon-readers';

/**
 * Whether the next step of a ring change may go out, judged from every storage node's recon the way
 * Swift's admin guide asks an operator to: every node runs the ring just written, every node has
 * replicated since (so the partitions the last step moved have arrived), no device is too full to
 * take more, none is unmounted. docs/rings.md ("Safety checks before a step") says why each matters.
 */

/** How often Swift's Ring objects look at their file for a change (`Ring(reload_time=15)`). */
export const SWIFT_RING_RELOAD_MS = 15_000;

export interface StepSafetyInput {
  /** 'object', 'object-1', 'container', 'account': the ring file is `<ring>.ring.gz`. */
  ring: string;
  /** md5 (hex) of the .ring.gz currently installed on the ring host. */
  expectedMd5: string;
  /** When that ring was written (the last step went out). */
  ringWrittenAt: Date;
  /** Distinct storage nodes of the ring's devices (duplicates are checked once). */
  nodes: Array<{ ip: string; port: number }>;
  /** A device past this percentage used fails `fill`; default 90. */
  fillLimitPct: number;
}

export interface SafetyCheck {
  name: 'ring_md5' | 'replication' | 'fill' | 'mounted' | 'nodes';
  ok: boolean;
  /** A sentence for the operator: what was found and what to do. */
  detail: string;
}

export interface StepSafety {
  safe: boolean;
  checks: SafetyCheck[];
}

export interface StepSafetyOptions {
  /** Per node: its four recon requests run at once, each within this; default 10 000 ms. */
  timeoutMs?: number;
  /** Most nodes read at once; default 16. */
  concurrency?: number;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
}

export const DEFAULT_FILL_LIMIT_PCT = 90;
const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_CONCURRENCY = 16;
/** Nodes or devices named in one detail before "and N more". */
const LISTED = 5;

interface NodeRecon {
  node: string;
  md5s: Map<string, string | null>;
  replication: ReplicationReport;
  devices: DiskUsage[];
  unmounted: UnmountedDevice[];
}

type NodeResult = { node: string; ok: true; recon: NodeRecon } | { node: string; ok: false; reason: string };

const RING_NAME = /^(account|container|object(-[0-9]+)?)$/;

function replicationTypeOf(ring: string): ReplicationType {
  return ring.startsWith('object') ? 'object' : (ring as ReplicationType);
}

function validate(input: StepSafetyInput): void {
  if (!RING_NAME.test(input.ring))
    throw new RangeError(
      `checkStepSafety: ${JSON.stringify(input.ring)} is not a ring name (object, object-<policy index>, container or account)`,
    );
  if (!/^[0-9a-f]{32}$/i.test(input.expectedMd5))
    throw new RangeError(
      `checkStepSafety: expectedMd5 must be 32 hex digits (got ${JSON.stringify(input.expectedMd5)})`,
    );
  // types.isDate, not instanceof: a Date from another realm (vm, jest) is a Date too.
  if (!types.isDate(input.ringWrittenAt) || Number.isNaN(input.ringWrittenAt.getTime()))
    throw new RangeError('checkStepSafety: ringWrittenAt must be a valid date');
  if (!Number.isFinite(input.fillLimitPct) || input.fillLimitPct <= 0 || input.fillLimitPct > 100)
    throw new RangeError(`checkStepSafety: fillLimitPct must be above 0 and at most 100 (got ${input.fillLimitPct})`);
}

const nodeName = (n: ReconNode): string => `${n.ip.includes(':') ? `[${n.ip}]` : n.ip}:${n.port}`;
const shortMd5 = (md5: string): string => `${md5.slice(0, 8)}…`;
const iso = (ms: number): string => new Date(ms).toISOString();
const article = (word: string): string => (/^[aeiou]/.test(word) ? 'an' : 'a');

/** "a, b, c" or "a, b, c, d, e and 3 more". */
function listed(items: string[], separator = ', '): string {
  if (items.length <= LISTED) return items.join(separator);
  return `${items.slice(0, LISTED).join(separator)} and ${items.length - LISTED} more`;
}

async function readNode(
  node: ReconNode,
  type: ReplicationType,
  options: Required<Omit<StepSafetyOptions, 'fetch'>> & { fetch?: typeof fetch },
): Promise<NodeResult> {
  const name = nodeName(node);
  const baseUrl = reconBaseUrl(node);
  // Once one answer fails the node has failed: the siblings still in flight are abandoned, so a
  // failed node stops holding connections that `concurrency` no longer counts.
  const abandon = new AbortController();
  const recon = { timeoutMs: options.timeoutMs, fetch: options.fetch, signal: abandon.signal };
  try {
    const [md5s, replication, devices, unmounted] = await Promise.all([
      fetchRingMd5s(baseUrl, recon),
      fetchReplication(baseUrl, type, recon),
      fetchDiskUsage(baseUrl, recon),
      fetchUnmounted(baseUrl, recon),
    ]);
    return { node: name, ok: true, recon: { node: name, md5s, replication, devices, unmounted } };
  } catch (e) {
    abandon.abort();
    return { node: name, ok: false, reason: e instanceof ReconError ? e.reason : String((e as Error).message ?? e) };
  }
}

/**
 * Reads `/recon/ringmd5`, `/recon/replication/<type>`, `/recon/diskusage` and `/recon/unmounted` from
 * every node (at most `concurrency` nodes at once, each within `timeoutMs`) and returns one check of
 * each kind. `safe` only when every check is ok; a node that does not answer fails `nodes` and is
 * left out of the other checks. Never rejects because of a node; throws RangeError on bad input.
 */
export async function checkStepSafety(input: StepSafetyInput, options: StepSafetyOptions = {}): Promise<StepSafety> {
  validate(input);
  const type = replicationTypeOf(input.ring);
  const seen = new Set<string>();
  const nodes = input.nodes.filter((n) => {
    const key = nodeName(n);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const settings = {
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    concurrency: options.concurrency ?? DEFAULT_CONCURRENCY,
    fetch: options.fetch,
  };
  const results = await mapConcurrent(nodes, settings.concurrency, (n) => readNode(n, type, settings));
  return judge(input, type, results, settings.timeoutMs);
}

function judge(input: StepSafetyInput, type: ReplicationType, results: NodeResult[], timeoutMs: number): StepSafety {
  const file = `${input.ring}.ring.gz`;
  const answered = results.flatMap((r) => (r.ok ? [r.recon] : []));
  const silent = results.flatMap((r) => (r.ok ? [] : [`${r.node} (${r.reason})`]));
  const checks: SafetyCheck[] = [nodesCheck(file, results.length, silent, timeoutMs)];
  if (answered.length === 0) {
    const why = 'no node answered recon, so this could not be checked — see the nodes check.';
    for (const name of ['ring_md5', 'replication', 'fill', 'mounted'] as const)
      checks.push({ name, ok: false, detail: `Not checked: ${why}` });
  } else {
    const scope = silent.length
      ? ` (of the ${answered.length === 1 ? 'node that' : `${answered.length} nodes that`} answered)`
      : '';
    checks.push(ringMd5Check(file, input.expectedMd5, answered, scope));
    checks.push(replicationCheck(file, type, input.ringWrittenAt, answered, scope));
    checks.push(fillCheck(input.fillLimitPct, answered, scope));
    checks.push(mountedCheck(answered, scope));
  }
  return { safe: checks.every((c) => c.ok), checks };
}

function nodesCheck(file: string, total: number, silent: string[], timeoutMs: number): SafetyCheck {
  if (total === 0)
    return {
      name: 'nodes',
      ok: false,
      detail: `No storage nodes were given for ${file}, so nothing could be checked — pass the nodes of the ring's devices.`,
    };
  if (silent.length === 0)
    return {
      name: 'nodes',
      ok: true,
      detail: `${total === 1 ? 'The storage node' : `All ${total} storage nodes`} of ${file} answered recon within ${timeoutMs} ms.`,
    };
  return {
    name: 'nodes',
    ok: false,
    detail:
      `${silent.length} of ${total} storage ${total === 1 ? 'node' : 'nodes'} did not answer recon: ${listed(silent, '; ')} — ` +
      'start the storage server there (with the recon middleware in its pipeline) or fix the network, then check again.',
  };
}

function ringMd5Check(file: string, expected: string, nodes: NodeRecon[], scope: string): SafetyCheck {
  const want = expected.toLowerCase();
  const problems: string[] = [];
  for (const n of nodes) {
    const md5 = n.md5s.get(file);
    if (md5 === undefined) problems.push(`${n.node} has no ${file}`);
    else if (md5 === null) problems.push(`${n.node} cannot read its ${file}`);
    else if (md5.toLowerCase() !== want) problems.push(`${n.node} still runs ${file} ${shortMd5(md5)}`);
  }
  if (problems.length === 0)
    return {
      name: 'ring_md5',
      ok: true,
      detail: `Every node${scope} runs ${file} ${shortMd5(want)}, the ring last written.`,
    };
  return {
    name: 'ring_md5',
    ok: false,
    detail:
      `${listed(problems, '; ')} (expected ${shortMd5(want)}) — wait for the ring to reach ` +
      `${problems.length === 1 ? 'it' : 'them'} (or run cairn rings pull there).`,
  };
}

function replicationCheck(
  file: string,
  type: ReplicationType,
  writtenAt: Date,
  nodes: NodeRecon[],
  scope: string,
): SafetyCheck {
  const written = writtenAt.getTime();
  const lastKey = type === 'object' ? 'object_replication_last' : 'replication_last';
  const never: string[] = [];
  const before: string[] = [];
  const early: string[] = [];
  let oldest = Infinity;
  for (const n of nodes) {
    const { lastMs, durationMs } = n.replication;
    if (lastMs === null) {
      never.push(n.node);
      continue;
    }
    // recon records a pass when it ends, even one the object replicator aborted because the ring
    // changed under it: only a pass that *began* after the write has worked from the new ring.
    const startedMs = lastMs - (durationMs ?? 0);
    if (startedMs <= written) before.push(`${n.node} (began ${iso(startedMs)}, finished ${iso(lastMs)})`);
    // Swift's Ring objects look at the file at most every 15 s: a pass that began sooner after the
    // write may still have placed partitions by the previous ring.
    else if (startedMs <= written + SWIFT_RING_RELOAD_MS) early.push(`${n.node} (began ${iso(startedMs)})`);
    else oldest = Math.min(oldest, lastMs);
  }
  if (never.length === 0 && before.length === 0 && early.length === 0)
    return {
      name: 'replication',
      ok: true,
      detail:
        `Every node${scope} finished ${article(type)} ${type} replication pass that began after ${file} was written at ` +
        `${iso(written)} (the oldest finished at ${iso(oldest)}).`,
    };
  const parts: string[] = [];
  if (before.length)
    parts.push(
      `${listed(before, '; ')} last finished ${article(type)} ${type} replication pass that began before ${file} was written at ` +
        `${iso(written)} — wait for a pass that begins after the write to finish there (swift-recon ${type} -r shows it).`,
    );
  if (early.length)
    parts.push(
      `${listed(early, '; ')} last finished ${article(type)} ${type} replication pass that began within ` +
        `${SWIFT_RING_RELOAD_MS / 1000} s of the write of ${file} at ${iso(written)}, before Swift's servers reload a ` +
        'changed ring, so it may have run on the previous one — wait for the next pass to finish there.',
    );
  if (never.length)
    parts.push(
      `${listed(never)} ${never.length === 1 ? 'has' : 'have'} not finished ${article(type)} ${type} replication pass yet ` +
        `(recon's ${lastKey} is empty) — check that swift-${type}-replicator runs there and writes to the ` +
        'recon_cache_path the recon middleware reads.',
    );
  return { name: 'replication', ok: false, detail: parts.join(' ') };
}

function fillCheck(limitPct: number, nodes: NodeRecon[], scope: string): SafetyCheck {
  const over: string[] = [];
  let fullest: { where: string; pct: number } | undefined;
  for (const n of nodes) {
    for (const d of n.devices) {
      if (!d.mounted || d.size === null || d.used === null || d.size === 0) continue;
      const pct = (d.used / d.size) * 100;
      const where = `${n.node}/${d.device}`;
      if (!fullest || pct > fullest.pct) fullest = { where, pct };
      if (pct > limitPct) over.push(`${where} at ${pct.toFixed(1)}%`);
    }
  }
  if (over.length === 0)
    return {
      name: 'fill',
      ok: true,
      detail: fullest
        ? `No device${scope} is past ${limitPct}% used (the fullest is ${fullest.where} at ${fullest.pct.toFixed(1)}%).`
        : `No mounted device${scope} reported its size, so none is past ${limitPct}% used.`,
    };
  return {
    name: 'fill',
    ok: false,
    detail:
      `${listed(over)} ${over.length === 1 ? 'is' : 'are'} past the ${limitPct}% fill limit — ` +
      'add capacity or lower the weight of the full devices before the next step moves more partitions onto them.',
  };
}

function mountedCheck(nodes: NodeRecon[], scope: string): SafetyCheck {
  const down = nodes.flatMap((n) => n.unmounted.map((u) => `${n.node}/${u.device}${u.reason ? ` (${u.reason})` : ''}`));
  if (down.length === 0) return { name: 'mounted', ok: true, detail: `No node${scope} reports an unmounted device.` };
  return {
    name: 'mounted',
    ok: false,
    detail:
      `${listed(down)} ${down.length === 1 ? 'is' : 'are'} unmounted — mount ${down.length === 1 ? 'it' : 'them'} ` +
      'again (or set the device weight to 0 in the ring) before the next step: partitions of an unmounted ' +
      'device are served from handoffs, and a step would move more data while they are.',
  };
}
