import { createHash } from 'node:crypto';
import { errors, escapeHtml, isRingName, RING_NAME_RULE, setBounded, type Cluster } from '@cairn/domain';
import { parseRing, RingError, type RingDevice, type RingWithAssignments } from '@cairn/swift-cluster';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';
import { API_ROOT } from '../resources/uris';
import { recordAudit, type AuditTarget } from '../repositories/audit';
import { getCluster } from '../repositories/clusters';
import type { ListQuery, Page } from '../repositories/list-types';
import {
  currentRingBytes,
  currentRingVersion,
  insertRingVersion,
  listRingVersions,
  makeCurrent,
  previousRingVersion,
  ringBytesOf,
  type RingVersion,
} from '../repositories/rings';
import { findVisibleCluster } from './clusters';
import { auditActorOf, type Acting } from './context';
import { requireWriterOn } from './policy';
import { Slots } from './slots';

export type { RingVersion };

/** A ring device as the rings resource lists it: where it is, in which region and zone, of what weight. */
export interface RingDeviceJson {
  id: number;
  region: number;
  zone: number;
  ip: string;
  port: number;
  device: string;
  weight: number;
}

/** A version with the devices of its ring's header: listed for the current version only, null for the others. */
export type ListedRingVersion = RingVersion & { devices: RingDeviceJson[] | null };

const deviceJson = (d: RingDevice): RingDeviceJson => ({
  id: d.id,
  region: d.region,
  zone: d.zone,
  ip: d.ip,
  port: d.port,
  device: d.device,
  weight: d.weight,
});

/**
 * The devices of rings already read, by the md5 of their file: a file's devices never change, and
 * every node's `cairn rings pull` lists the current versions every few minutes, so each ring is
 * read once rather than on every list. Bounded: a cluster has a few rings, a process a few clusters.
 */
const DEVICES_CACHED = 64;
const devicesByMd5 = new Map<string, RingDeviceJson[]>();

function remember(md5: string, devices: RingDeviceJson[]): RingDeviceJson[] {
  setBounded(devicesByMd5, md5, devices, DEVICES_CACHED);
  return devices;
}

/**
 * Adds the devices of the current versions among `versions`. Reading them means reading the ring
 * file, so only the version nodes run (one per ring) lists them: a page of old versions costs no
 * ring reads. A stored ring was read whole when pushed, so it parses.
 */
async function withDevices(db: Db, clusterId: number, versions: RingVersion[]): Promise<ListedRingVersion[]> {
  const unread = versions.filter((v) => v.current && !devicesByMd5.has(v.md5));
  const bytes = await ringBytesOf(
    db,
    clusterId,
    unread.map((v) => v.id),
  );
  return versions.map((v) => {
    if (!v.current) return { ...v, devices: null };
    const known = devicesByMd5.get(v.md5);
    if (known) return { ...v, devices: remember(v.md5, known) };
    const gz = bytes.get(v.id);
    if (!gz) return { ...v, devices: null };
    const { devices } = parseRing(gz, `${v.ring}.ring.gz`, { maxDecompressedBytes: RING_DECOMPRESSED_LIMIT });
    return { ...v, devices: remember(v.md5, devices.map(deviceJson)) };
  });
}

/**
 * A ring of part power 24 with 6 replicas is 200 MB of assignments before gzip; nothing real is
 * larger. Refused past these before the ring is parsed.
 */
export const RING_UPLOAD_LIMIT = '64mb';
const RING_DECOMPRESSED_LIMIT = 256 * 1024 * 1024;

/** What a push may say about where the ring came from (`cairn rings apply`'s plan and step). */
export interface RingOrigin {
  planId: string | null;
  planStep: number | null;
  plan: unknown;
}

export const ringFileUri = (clusterId: number, ring: string): string =>
  `${API_ROOT}/clusters/${clusterId}/rings/${ring}.ring.gz`;

function checkedRingName(raw: string | undefined): string {
  const name = raw ?? '';
  if (!isRingName(name))
    throw errors.invalidInput(`'${escapeHtml(name)}' is not a Swift ring name: give ${RING_NAME_RULE}.`);
  return name;
}

/** What the audit trail keeps of a version: never its bytes. */
const summary = (v: RingVersion) => ({
  version: v.version,
  md5: v.md5,
  size_bytes: v.sizeBytes,
  part_power: v.partPower,
  replicas: v.replicas,
  device_count: v.deviceCount,
  plan_id: v.planId,
  plan_step: v.planStep,
});

const ringTarget = (cluster: Cluster, v: RingVersion): AuditTarget => ({
  type: 'rings',
  id: v.id,
  name: `${cluster.name}/${v.ring}`,
  uri: ringFileUri(cluster.id, v.ring),
});

/** The cluster a path names, if the operator may see it (its versions are then listed). */
export const visibleCluster = (db: Db, acting: Acting, rawId: string | undefined): Promise<Cluster> =>
  findVisibleCluster(db, acting.operator, rawId);

/** One page of a visible cluster's ring versions (`visibleCluster` checked the visibility). */
export async function list(db: Db, cluster: Cluster, query: ListQuery): Promise<Page<ListedRingVersion>> {
  const page = await listRingVersions(db, cluster.id, query);
  return { total: page.total, rows: await withDevices(db, cluster.id, page.rows) };
}

/** The current ring's bytes and md5, for any operator who sees the cluster. */
export async function currentFile(
  db: Db,
  acting: Acting,
  rawId: string | undefined,
  rawRing: string | undefined,
): Promise<{ md5: string; version: number; ringGz: Buffer }> {
  const cluster = await findVisibleCluster(db, acting.operator, rawId);
  const ring = rawRing ?? '';
  const file = isRingName(ring) ? await currentRingBytes(db, cluster.id, ring) : null;
  if (!file) throw errors.notFound(`Cluster '${escapeHtml(cluster.name)}' has no ring '${escapeHtml(ring)}'.`);
  return file;
}

/** Ring uploads hold the ring several times over while it is parsed: one at a time per process. */
const pushSlots = new Slots(1);

export interface PushOutcome {
  created: boolean;
  version: ListedRingVersion;
}

/**
 * Stores a pushed ring as the new current version of its name, once it is read as a valid Swift
 * ring (every assignment row checked) with the part power of the current version. The same bytes
 * as the current version are not a new version. `uploadOf` reads the body only once the writer is
 * allowed.
 */
export async function push(
  db: Db,
  acting: Acting,
  rawId: string | undefined,
  rawRing: string | undefined,
  uploadOf: () => Promise<{ origin: RingOrigin; bytes: Buffer }>,
): Promise<PushOutcome> {
  const cluster = await findVisibleCluster(db, acting.operator, rawId);
  requireWriterOn(acting.operator, cluster.id);
  const ring = checkedRingName(rawRing);
  return pushSlots.run(async () => {
    const { origin, bytes } = await uploadOf();
    let parsed: RingWithAssignments;
    try {
      parsed = parseRing(bytes, `${ring}.ring.gz`, {
        withAssignments: true,
        maxDecompressedBytes: RING_DECOMPRESSED_LIMIT,
      });
    } catch (e) {
      if (e instanceof RingError) throw errors.invalidInput(`The body is not a Swift ring file: ${e.message}.`);
      throw e;
    }
    const md5 = createHash('md5').update(bytes).digest('hex');
    return withDbErrors(() =>
      db.transaction(async (trx) => {
        // Holding the cluster's row serialises pushes and rollbacks of its rings: version numbers
        // never collide and "current" is read and moved by one writer at a time.
        if (!(await getCluster(trx, cluster.id, true))) throw errors.notFound(`No cluster with id '${cluster.id}'.`);
        const current = await currentRingVersion(trx, cluster.id, ring);
        const devices = remember(md5, parsed.devices.map(deviceJson));
        if (current?.md5 === md5) return { created: false, version: { ...current, devices } };
        if (current && current.partPower !== parsed.partPower)
          throw errors.conflict(
            `The ring has part power ${parsed.partPower} but version ${current.version} of '${ring}' has ${current.partPower}: Swift cannot change a ring's part power by installing a new ring (use swift-ring-builder's increase_partition_power procedure).`,
          );
        const version = await insertRingVersion(trx, {
          clusterId: cluster.id,
          ring,
          ringGz: bytes,
          md5,
          partPower: parsed.partPower,
          replicas: parsed.replicas,
          deviceCount: parsed.devices.length,
          ...origin,
          createdBy: auditActorOf(acting).operatorName,
          createdById: auditActorOf(acting).operatorId,
        });
        await recordAudit(trx, auditActorOf(acting), {
          action: 'push_ring',
          target: ringTarget(cluster, version),
          before: current ? summary(current) : null,
          after: summary(version),
        });
        return { created: true, version: { ...version, devices } };
      }),
    );
  });
}

/** Makes the version before the current one current again; the newer one stays listed. */
export async function rollback(
  db: Db,
  acting: Acting,
  rawId: string | undefined,
  rawRing: string | undefined,
): Promise<ListedRingVersion> {
  const cluster = await findVisibleCluster(db, acting.operator, rawId);
  requireWriterOn(acting.operator, cluster.id);
  const ring = checkedRingName(rawRing);
  const made = await withDbErrors(() =>
    db.transaction(async (trx) => {
      if (!(await getCluster(trx, cluster.id, true))) throw errors.notFound(`No cluster with id '${cluster.id}'.`);
      const current = await currentRingVersion(trx, cluster.id, ring);
      if (!current) throw errors.notFound(`Cluster '${escapeHtml(cluster.name)}' has no ring '${ring}'.`);
      const previous = await previousRingVersion(trx, cluster.id, ring, current.version);
      if (!previous)
        throw errors.conflict(
          `Version ${current.version} is the oldest version of ring '${ring}' of cluster '${escapeHtml(cluster.name)}': there is none before it to roll back to.`,
        );
      await makeCurrent(trx, cluster.id, ring, previous.id);
      await recordAudit(trx, auditActorOf(acting), {
        action: 'rollback_ring',
        target: ringTarget(cluster, previous),
        before: summary(current),
        after: summary(previous),
      });
      return { ...previous, current: true };
    }),
  );
  const [listed] = await withDevices(db, cluster.id, [made]);
  return listed!;
}
