/**
 * The JSON of each recon endpoint a health round reads, as Swift 2.30's recon middleware
 * (swift/common/middleware/recon.py) writes it, and one reader per endpoint that checks an answer
 * has that shape. A reader returns the answer itself, unchanged: the health API receives what Swift
 * said, and a finding rule can rely on the types below. Keys read from a recon cache file are null
 * until the daemon that writes them has run (and absent in Swifts that never wrote them).
 */

/** `/recon/diskusage`: one entry per directory under the devices path. */
export interface ReconDiskUsageEntry {
  device: string;
  /** true; false when not a mount point; the error text when checking it failed. */
  mounted: boolean | string;
  /** Bytes when mounted, `''` otherwise. */
  size: number | '';
  used: number | '';
  avail: number | '';
}

/** `/recon/unmounted`: only the devices that are not mounted. */
export interface ReconUnmountedEntry {
  device: string;
  mounted: false | string;
}

/** What a replicator writes at the end of a pass; the counts differ between object and db replicators. */
export type ReconReplicationStats = Record<string, unknown> & {
  attempted?: number;
  success?: number;
  failure?: number;
  /** Epoch seconds the pass started (db replicators). */
  start?: number;
};

export interface ReconReplication {
  /** Length of the last pass: seconds for account/container, minutes for object. */
  replication_time?: number | null;
  /** Epoch seconds the last pass ended. */
  replication_last?: number | null;
  replication_stats?: ReconReplicationStats | null;
}

export interface ReconObjectReplication extends ReconReplication {
  object_replication_time?: number | null;
  object_replication_last?: number | null;
}

export interface ReconHealthAnswers {
  diskusage: ReconDiskUsageEntry[];
  unmounted: ReconUnmountedEntry[];
  driveaudit: { drive_audit_errors?: number | null };
  async: { async_pending?: number | null; async_pending_last?: number | null };
  quarantined: {
    objects: number;
    containers: number;
    accounts: number;
    /** By policy index: `{"0": {"objects": 3}}`. */
    policies: Record<string, { objects: number }>;
  };
  'replication/account': ReconReplication;
  'replication/container': ReconReplication;
  'replication/object': ReconObjectReplication;
  /** Seconds of the last sweep. */
  'updater/container': { container_updater_sweep?: number | null };
  'updater/object': { object_updater_sweep?: number | null };
  'expirer/object': { object_expiration_pass?: number | null; expired_last_pass?: number | null };
  /** `{"/etc/swift/object.ring.gz": "<md5 hex>" | null}`, keys are paths on the node. */
  ringmd5: Record<string, string | null>;
  /** The node's clock, epoch seconds. */
  time: number;
  load: { '1m': number; '5m': number; '15m': number; tasks: string; processes: number };
}

export type HealthEndpoint = keyof ReconHealthAnswers;

/** Every endpoint of a health round, in the order a round reads them. */
export const HEALTH_ENDPOINTS: readonly HealthEndpoint[] = [
  'diskusage',
  'unmounted',
  'driveaudit',
  'async',
  'quarantined',
  'replication/account',
  'replication/container',
  'replication/object',
  'updater/container',
  'updater/object',
  'expirer/object',
  'ringmd5',
  'time',
  'load',
];

/** An answer that does not have its endpoint's shape; the message is a sentence for operators. */
export class ReconShapeError extends Error {
  override readonly name = 'ReconShapeError';
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const show = (v: unknown): string => (v === undefined ? 'nothing' : JSON.stringify(v));
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

function object(body: unknown, endpoint: string): Json {
  if (!isObject(body)) throw new ReconShapeError(`/recon/${endpoint} should be a JSON object, not ${show(body)}`);
  return body;
}

function list(body: unknown, endpoint: string): unknown[] {
  if (!Array.isArray(body)) throw new ReconShapeError(`/recon/${endpoint} should be a JSON list, not ${show(body)}`);
  return body;
}

/** Each key, when present and not null, passes `ok`. */
function nullable(o: Json, endpoint: string, keys: string[], ok: (v: unknown) => boolean, what: string): void {
  for (const key of keys) {
    const v = o[key];
    if (v !== undefined && v !== null && !ok(v))
      throw new ReconShapeError(`/recon/${endpoint}: '${key}' should be ${what}, not ${show(v)}`);
  }
}

function entries<T>(body: unknown, endpoint: string, check: (e: Json, where: string) => void): T[] {
  return list(body, endpoint).map((entry, i) => {
    const where = `/recon/${endpoint} entry ${i}`;
    if (!isObject(entry) || typeof entry['device'] !== 'string' || entry['device'] === '')
      throw new ReconShapeError(`${where} has no device name`);
    check(entry, `${where} (${entry['device']})`);
    return entry as T;
  });
}

const replication =
  (type: string, extra: string[] = []) =>
  (body: unknown): ReconObjectReplication => {
    const endpoint = `replication/${type}`;
    const o = object(body, endpoint);
    nullable(o, endpoint, ['replication_time', 'replication_last', ...extra], isNumber, 'a number');
    nullable(o, endpoint, ['replication_stats'], isObject, 'an object');
    return o;
  };

const sweeps =
  (endpoint: string, keys: string[]) =>
  (body: unknown): Json => {
    const o = object(body, endpoint);
    nullable(o, endpoint, keys, isNumber, 'a number');
    return o;
  };

/** One reader per endpoint: the answer, unchanged, or a `ReconShapeError` saying what is wrong. */
export const HEALTH_READERS: { [E in HealthEndpoint]: (body: unknown) => ReconHealthAnswers[E] } = {
  diskusage: (body) =>
    entries<ReconDiskUsageEntry>(body, 'diskusage', (e, where) => {
      const mounted = e['mounted'];
      if (typeof mounted !== 'boolean' && typeof mounted !== 'string')
        throw new ReconShapeError(`${where}: 'mounted' should be true, false or an error text, not ${show(mounted)}`);
      for (const key of ['size', 'used', 'avail']) {
        const ok = mounted === true ? isCount(e[key]) : e[key] === '' || isCount(e[key]);
        if (!ok) throw new ReconShapeError(`${where}: '${key}' should be a byte count, not ${show(e[key])}`);
      }
    }),
  unmounted: (body) =>
    entries<ReconUnmountedEntry>(body, 'unmounted', (e, where) => {
      if (e['mounted'] !== false && typeof e['mounted'] !== 'string')
        throw new ReconShapeError(`${where}: 'mounted' should be false or an error text, not ${show(e['mounted'])}`);
    }),
  driveaudit: (body) => {
    const o = object(body, 'driveaudit');
    nullable(o, 'driveaudit', ['drive_audit_errors'], isCount, 'a count');
    return o;
  },
  async: (body) => {
    const o = object(body, 'async');
    nullable(o, 'async', ['async_pending'], isCount, 'a count');
    nullable(o, 'async', ['async_pending_last'], isNumber, 'a number');
    return o;
  },
  quarantined: (body) => {
    const o = object(body, 'quarantined');
    for (const key of ['objects', 'containers', 'accounts'])
      if (!isCount(o[key]))
        throw new ReconShapeError(`/recon/quarantined: '${key}' should be a count, not ${show(o[key])}`);
    const policies = object(o['policies'], 'quarantined policies');
    for (const [index, p] of Object.entries(policies))
      if (!isObject(p) || !isCount(p['objects']))
        throw new ReconShapeError(`/recon/quarantined: policy ${index} should have an 'objects' count, not ${show(p)}`);
    return o as ReconHealthAnswers['quarantined'];
  },
  'replication/account': replication('account'),
  'replication/container': replication('container'),
  'replication/object': replication('object', ['object_replication_time', 'object_replication_last']),
  'updater/container': sweeps('updater/container', ['container_updater_sweep']),
  'updater/object': sweeps('updater/object', ['object_updater_sweep']),
  'expirer/object': (body) => {
    const o = sweeps('expirer/object', ['object_expiration_pass'])(body);
    nullable(o, 'expirer/object', ['expired_last_pass'], isCount, 'a count');
    return o;
  },
  ringmd5: (body) => {
    const o = object(body, 'ringmd5');
    for (const [path, md5] of Object.entries(o))
      if (md5 !== null && (typeof md5 !== 'string' || !/^[0-9a-f]{32}$/.test(md5)))
        throw new ReconShapeError(`/recon/ringmd5: ${path} should have an md5 or null, not ${show(md5)}`);
    return o as Record<string, string | null>;
  },
  time: (body) => {
    if (!isNumber(body) || body <= 0)
      throw new ReconShapeError(`/recon/time should be epoch seconds, not ${show(body)}`);
    return body;
  },
  load: (body) => {
    const o = object(body, 'load');
    for (const key of ['1m', '5m', '15m'])
      if (!isNumber(o[key])) throw new ReconShapeError(`/recon/load: '${key}' should be a number, not ${show(o[key])}`);
    if (typeof o['tasks'] !== 'string')
      throw new ReconShapeError(`/recon/load: 'tasks' should be a text like "2/345", not ${show(o['tasks'])}`);
    if (!isCount(o['processes']))
      throw new ReconShapeError(`/recon/load: 'processes' should be a count, not ${show(o['processes'])}`);
    return o as ReconHealthAnswers['load'];
  },
};
