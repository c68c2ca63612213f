import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { errors, isRingName } from '@cairn/domain';
import { parseRing, RingError, type Ring } from '@cairn/swift-cluster';
import { apiBinary, apiError, jsonOf, type ApiTarget } from '../api-client';
import { listAll } from '../remote/list';
import { installAtomically } from './install';

/**
 * `cairn rings pull`: makes the rings in a node's swift dir the cluster's current versions. A ring
 * is fetched with the installed file's md5 as If-None-Match, so an unchanged ring costs a 304; a
 * changed one is checked to belong to this node's cluster before anything is written, then
 * installed atomically (install.ts). Swift's servers see the new file's mtime and reload it.
 */

export interface PullOptions {
  target: ApiTarget;
  clusterId: number;
  swiftDir: string;
  /** The rings to pull; default every ring the API has a current version of for the cluster. */
  rings?: readonly string[];
  signal?: AbortSignal;
}

export interface PullOutcome {
  ring: string;
  outcome: 'installed' | 'unchanged';
  version: number;
  md5: string;
}

const md5Of = (bytes: Buffer): string => createHash('md5').update(bytes).digest('hex');
const deviceKey = (d: Ring['devices'][number]) => `${d.ip}:${d.port}/${d.device}`;
const fileOf = (ring: string) => `${ring}.ring.gz`;

interface Installed {
  md5: string;
  ring: Ring;
}

/** The ring installed at `path`, or null when there is none; an unreadable one is refused. */
async function readInstalled(path: string, name: string): Promise<Installed | null> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  try {
    return { md5: md5Of(bytes), ring: parseRing(bytes, fileOf(name)) };
  } catch (e) {
    if (!(e instanceof RingError)) throw e;
    throw errors.invalidInput(
      `The installed ${path} is not a ring Cairn can read (${e.message}); nothing was installed: move it aside to install the cluster's ring as a first one.`,
    );
  }
}

/** The storage node addresses of every other ring already in the swift dir. */
async function nodesOfOtherRings(swiftDir: string, except: string): Promise<Set<string>> {
  const names = (await readdir(swiftDir)).filter((f) => f.endsWith('.ring.gz') && f !== fileOf(except));
  const ips = new Set<string>();
  for (const name of names) {
    try {
      for (const d of parseRing(await readFile(join(swiftDir, name)), name).devices) ips.add(d.ip);
    } catch {
      // A ring Cairn cannot read says nothing about the node's cluster.
    }
  }
  return ips;
}

/**
 * Why `fetched` is not this node's cluster's ring, or null when it is: with a ring installed, the
 * new one must have its part power (Swift cannot change it by a new ring) and share at least one
 * device (ip:port/device) with it; as a first install, it must share a storage node address with
 * the swift dir's other rings, when there are any.
 */
async function foreignReason(
  name: string,
  fetched: Ring,
  installed: Installed | null,
  swiftDir: string,
): Promise<string | null> {
  if (installed) {
    if (installed.ring.partPower !== fetched.partPower)
      return `${fileOf(name)} from the API has part power ${fetched.partPower}, the installed one ${installed.ring.partPower}`;
    const have = new Set(installed.ring.devices.map(deviceKey));
    if (!fetched.devices.some((d) => have.has(deviceKey(d))))
      return `${fileOf(name)} from the API shares no device (ip:port/device) with the installed one`;
    return null;
  }
  const nodes = await nodesOfOtherRings(swiftDir, name);
  if (nodes.size > 0 && !fetched.devices.some((d) => nodes.has(d.ip)))
    return `${fileOf(name)} from the API names none of the storage nodes of the other rings in ${swiftDir}`;
  return null;
}

/** The rings the API has a current version of for the cluster. */
async function currentRings(target: ApiTarget, clusterId: number): Promise<string[]> {
  const rows = await listAll(target, `/api/v1/clusters/${clusterId}/rings/`, [['current', 'true']]);
  return [...new Set(rows.map((r) => String(r.ring)))].sort();
}

interface Fetched {
  name: string;
  path: string;
  version: number;
  md5: string;
  bytes?: Buffer;
}

async function fetchRing(o: PullOptions, name: string): Promise<{ fetched: Fetched; refusal: string | null }> {
  if (!isRingName(name)) throw errors.invalidInput(`'${name}' is not a Swift ring name.`);
  const path = join(o.swiftDir, fileOf(name));
  const installed = await readInstalled(path, name);
  const r = await apiBinary(o.target, 'GET', `/api/v1/clusters/${o.clusterId}/rings/${name}.ring.gz`, {
    headers: installed ? { 'If-None-Match': `"${installed.md5}"` } : {},
    signal: o.signal,
  });
  const version = Number(r.headers.get('x-cairn-ring-version') ?? 0);
  if (r.status === 304) return { fetched: { name, path, version, md5: installed!.md5 }, refusal: null };
  if (r.status !== 200)
    throw apiError(`reading ${fileOf(name)} of cluster ${o.clusterId}`, { status: r.status, json: jsonOf(r.bytes) });
  const md5 = md5Of(r.bytes);
  if (r.headers.get('etag') !== `"${md5}"`)
    throw errors.unavailable(`${fileOf(name)} arrived damaged (its md5 is not its ETag); nothing was installed.`);
  let ring: Ring;
  try {
    ring = parseRing(r.bytes, fileOf(name), { withAssignments: true });
  } catch (e) {
    if (!(e instanceof RingError)) throw e;
    return {
      fetched: { name, path, version, md5 },
      refusal: `${fileOf(name)} from the API is not a ring (${e.message})`,
    };
  }
  const refusal = await foreignReason(name, ring, installed, o.swiftDir);
  return { fetched: { name, path, version, md5, bytes: r.bytes }, refusal };
}

/**
 * One round: every ring fetched and checked first; then, only when none was refused, the changed
 * ones installed. A refusal writes nothing at all.
 */
export async function pullOnce(o: PullOptions): Promise<PullOutcome[]> {
  const names = o.rings && o.rings.length > 0 ? [...o.rings] : await currentRings(o.target, o.clusterId);
  const fetched: Fetched[] = [];
  const refusals: string[] = [];
  for (const name of names) {
    const f = await fetchRing(o, name);
    fetched.push(f.fetched);
    if (f.refusal) refusals.push(f.refusal);
  }
  if (refusals.length > 0)
    throw errors.invalidInput(
      `Not this node's cluster's ring: ${refusals.join('; ')}. Nothing was installed; check --cluster (cluster ${o.clusterId}) and --swift-dir.`,
    );
  const out: PullOutcome[] = [];
  for (const f of fetched) {
    if (f.bytes) await installAtomically(f.path, f.bytes);
    out.push({ ring: f.name, outcome: f.bytes ? 'installed' : 'unchanged', version: f.version, md5: f.md5 });
  }
  return out;
}
