import { availableParallelism } from 'node:os';
import { hashPassword, passwordScheme, userCreateSchema, validate, type UserCreateInput } from '@cairn/domain';
import { mapConcurrent } from '@cairn/swift-cluster';
import { api, apiError } from '../api-client';
import type { CollectorConfig } from '../config';
import { findCluster } from '../utilization/client';
import type { ImportInput, Refusal } from './import-input';

/**
 * `cairn users import`: users from a file or from tempauth, created through the management API's
 * bulk create (PATCH /api/v1/users/ with up to 1000 objects, each with a password hash).
 *
 * Every line is checked first by the API's own rules (userCreateSchema), so a bad line is refused
 * with its line number and the others still go. Plaintext passwords are hashed here, with Cairn's
 * scrypt, as many at once as the machine has cores, up to libuv's 4 threads (node's async scrypt
 * already runs off the main thread, on that pool: a pool of worker_threads would add only
 * message passing): the password never crosses the network, and the
 * API is not held for minutes hashing a thousand passwords in one request. Names that exist are
 * skipped by the API and reported, so the import can be run again.
 */
export interface ImportOptions {
  cluster: string;
  input: ImportInput;
  dryRun: boolean;
  config: CollectorConfig;
  /** One line per user: created, skipped, or (dry run) what would happen. */
  out: (line: string) => void;
  /** One line per refused user, with the reason. */
  err: (line: string) => void;
  batchSize?: number;
  hashConcurrency?: number;
}

export interface ImportSummary {
  created: number;
  skipped: number;
  refused: number;
  seconds: number;
}

interface Planned {
  where: string;
  user: string;
  /** A hash given, or computed here from the given password. */
  passwordHash?: string;
  password?: string;
  isSuperuser: boolean;
  enabled: boolean;
  /** Imported from tempauth: the user's tempauth name (V1 `<user>:<tempauthUser>`). */
  tempauthUser?: string | null;
}

const BATCH = 1000;
/** Names per existence query (`user__in` repeated: names may hold commas). */
const LOOKUP_CHUNK = 100;

/** The names among `names` that already exist in the cluster. */
async function existingNames(config: CollectorConfig, clusterId: number, names: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < names.length; i += LOOKUP_CHUNK) {
    const chunk = names.slice(i, i + LOOKUP_CHUNK);
    const query = chunk.map((n) => `user__in=${encodeURIComponent(n)}`).join('&');
    const r = await api(config, 'GET', `/api/v1/users/?cluster=${clusterId}&limit=${LOOKUP_CHUNK}&${query}`);
    if (r.status !== 200) throw apiError('looking up existing users', r);
    for (const u of (r.json as { objects: Array<{ user: string }> }).objects) found.add(u.user);
  }
  return found;
}

/** Checks records by the API's rules; a name already in `seen` (earlier in the input) is refused. */
function plan(
  records: ImportInput['records'],
  clusterId: number,
  seen: Map<string, string>,
  refused: Refusal[],
): Planned[] {
  const planned: Planned[] = [];
  for (const { where, fields } of records) {
    let v: UserCreateInput;
    try {
      v = validate<UserCreateInput>(userCreateSchema, { ...fields, cluster: clusterId });
    } catch (e) {
      refused.push({ where, reason: e instanceof Error ? e.message : String(e) });
      continue;
    }
    const first = seen.get(v.user);
    if (first !== undefined) {
      refused.push({ where, reason: `user '${v.user}' appears again (first on ${first}).` });
      continue;
    }
    seen.set(v.user, where);
    planned.push({
      where,
      user: v.user,
      password: v.password,
      passwordHash: v.password_hash,
      isSuperuser: v.is_superuser,
      enabled: v.enabled,
      tempauthUser: v.tempauth_user,
    });
  }
  return planned;
}

/** Batches sent before the oldest must be answered: the next one is checked while the API writes. */
const IN_FLIGHT = 2;

export async function importUsers(options: ImportOptions): Promise<ImportSummary> {
  const started = performance.now();
  const { config, out, err } = options;
  const cluster = await findCluster(config, options.cluster);
  const refused: Refusal[] = [...options.input.refused];
  const seen = new Map<string, string>();
  const size = options.batchSize ?? BATCH;
  // libuv's pool has 4 threads unless UV_THREADPOOL_SIZE says otherwise: more in flight would only queue.
  const concurrency = options.hashConcurrency ?? Math.min(availableParallelism(), 4);
  let created = 0;
  let skipped = 0;
  const skip = (p: Planned) => {
    skipped++;
    out(`${p.where}: ${p.user}: skipped, a user of that name already exists in cluster '${cluster.name}'.`);
  };

  /** Sends one batch; its lines are printed when the caller awaits it, so in input order. */
  const send = async (batch: Planned[]): Promise<() => void> => {
    const objects = batch.map((p) => ({
      cluster: cluster.id,
      user: p.user,
      password_hash: p.passwordHash!,
      is_superuser: p.isSuperuser,
      enabled: p.enabled,
      ...(p.tempauthUser ? { tempauth_user: p.tempauthUser } : {}),
    }));
    const r = await api(config, 'PATCH', '/api/v1/users/', { objects });
    if (r.status !== 202) {
      // Checked by the same rules beforehand, so this is the API refusing the whole batch (a
      // permission, a cluster deleted meanwhile): every user of it is reported, the next batch still goes.
      const reason = apiError('the management API refused this batch', r).message;
      return () => batch.forEach((p) => refused.push({ where: p.where, reason }));
    }
    const answer = r.json as { objects: Array<{ user: string; password_scheme: string }> };
    const made = new Map(answer.objects.map((u) => [u.user, u.password_scheme]));
    return () => {
      for (const p of batch) {
        const scheme = made.get(p.user);
        if (scheme === undefined) {
          skip(p);
        } else {
          created++;
          out(`${p.where}: ${p.user}: created (${scheme}).`);
        }
      }
    };
  };

  const inFlight: Array<Promise<() => void>> = [];
  const records = options.input.records;
  for (let i = 0; i < records.length; i += size) {
    const planned = plan(records.slice(i, i + size), cluster.id, seen, refused);
    // Users given a plaintext password are looked up first so that no password of an existing
    // user is hashed for nothing (a re-run); in a dry run every user is.
    const toCheck = planned.filter((p) => options.dryRun || p.password !== undefined).map((p) => p.user);
    const existing = toCheck.length ? await existingNames(config, cluster.id, toCheck) : new Set<string>();
    const todo = planned.filter((p) => {
      if (!existing.has(p.user)) return true;
      skip(p);
      return false;
    });
    if (options.dryRun) {
      for (const p of todo) {
        const how = p.passwordHash ? passwordScheme(p.passwordHash) : 'password, hashed with scrypt';
        out(
          `${p.where}: ${p.user}: would be created (${how}${p.isSuperuser ? ', superuser' : ''}${p.enabled ? '' : ', disabled'}).`,
        );
      }
      created += todo.length;
      continue;
    }
    await mapConcurrent(
      todo.filter((p) => p.password !== undefined),
      concurrency,
      async (p) => {
        p.passwordHash = await hashPassword(p.password!, config.passwordHashParams);
        p.password = undefined;
      },
    );
    if (todo.length === 0) continue;
    const sending = send(todo);
    // Awaited in order below; until then a failure must not count as unhandled.
    sending.catch(() => {});
    inFlight.push(sending);
    if (inFlight.length >= IN_FLIGHT) (await inFlight.shift()!)();
  }
  for (const sending of inFlight) (await sending)();
  for (const r of refused) err(`${r.where}: refused: ${r.reason}`);
  return { created, skipped, refused: refused.length, seconds: (performance.now() - started) / 1000 };
}
