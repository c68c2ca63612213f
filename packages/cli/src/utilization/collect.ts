import pLimit from 'p-limit';
import pRetry from 'p-retry';
import type { CollectorConfig } from '../config';
import { api, apiError, BACKOFF, findCluster, unreachable, type ClusterInfo } from './client';

/**
 * One storage collection round: a reseller token from the cluster's own auth gateway (Swift V1
 * login of a superuser storage user), then a HEAD of every account the API knows (deleted users'
 * accounts too), a few at a time, with a timeout and retries per account. Samples go to the API
 * in batches as they come; an account that fails after its retries is reported and left out,
 * which lowers its hour's pct_complete. A 404 is an account never written to: zero.
 *
 * Swift names policies in its headers; the API stores indexes. The collector reads the cluster's
 * policies first and sends indexes, so that an account naming a policy the API does not know
 * (added to swift.conf since the capacity collector last ran) is reported and left out like any
 * failed account instead of making the API refuse the whole page.
 *
 * `signal` stops a round early (SIGTERM): no new HEAD starts, those in flight are abandoned, the
 * samples already taken are posted, and the result says `stopped`. The accounts not reached count
 * as missed for this slot, as if the round had not run for them.
 */
export interface StorageCollectOptions {
  cluster: string;
  config: CollectorConfig;
  /** Seconds between rounds: the API counts this round as one slot of 3600 / interval. */
  interval: number;
  progress: (line: string) => void;
  warn: (line: string) => void;
  now?: () => Date;
  signal?: AbortSignal;
}

export interface StorageCollectResult {
  clusterId: number;
  accounts: number;
  sampled: number;
  failed: number;
  /** The first few failed accounts with why ("AUTH_x: HTTP 503"), for the round's summary. */
  firstFailures: string[];
  seconds: number;
  /** The signal stopped the round before every account was HEADed. */
  stopped: boolean;
}

interface PolicyStats {
  name: string;
  bytes_used: number;
  object_count: number;
  container_count: number;
}

export interface AccountSample {
  account: string;
  bytes_used: number;
  object_count: number;
  container_count: number;
  policies: PolicyStats[];
}

const PAGE = 1000;
/**
 * Samples per POST: pages of HEADs are gathered into bigger writes, because each write costs the
 * API a transaction, an audit record and its monitoring rows besides its rows (a million accounts
 * are 100 writes, not 1,000). Half the API's limit per write (20,000), a few MB of JSON.
 */
const POST_SAMPLES = 10_000;
const FAILURES_SHOWN = 5;
const POLICY_HEADER = /^x-account-storage-policy-(.+)-(bytes-used|object-count|container-count)$/;

const num = (v: string | null): number => {
  const n = Number(v ?? 0);
  return Number.isSafeInteger(n) && n >= 0 ? n : 0;
};

/** The account's totals and per-policy stats from a HEAD's headers (Swift title-cases policy names in them). */
export function sampleFromHeaders(account: string, headers: Headers): AccountSample {
  const policies = new Map<string, PolicyStats>();
  headers.forEach((value, key) => {
    const m = POLICY_HEADER.exec(key.toLowerCase());
    if (!m) return;
    const name = m[1]!;
    const p = policies.get(name) ?? { name, bytes_used: 0, object_count: 0, container_count: 0 };
    p[m[2]!.replace('-', '_') as 'bytes_used' | 'object_count' | 'container_count'] = num(value);
    policies.set(name, p);
  });
  return {
    account,
    bytes_used: num(headers.get('x-account-bytes-used')),
    object_count: num(headers.get('x-account-object-count')),
    container_count: num(headers.get('x-account-container-count')),
    policies: [...policies.values()],
  };
}

/** Lower-cased policy name -> index, as the API reports the cluster's policies (every page). */
async function readPolicies(config: CollectorConfig, clusterId: number): Promise<Map<string, number>> {
  const policies = new Map<string, number>();
  let next: string | null = `/api/v1/clusters/${clusterId}/utilization/policies/?limit=${PAGE}`;
  while (next) {
    const res = await api(config, 'GET', next);
    if (res.status !== 200) throw apiError("reading the cluster's storage policies", res);
    const body = res.json as { meta?: { next?: string | null }; objects: Array<{ index: number; name: string }> };
    // Swift matches policy names without regard to case (and title-cases them in headers).
    for (const p of body.objects) policies.set(p.name.toLowerCase(), p.index);
    next = body.objects.length > 0 ? (body.meta?.next ?? null) : null;
  }
  return policies;
}

/** The sample as the API takes it (policy indexes), or the policy names the map does not know. */
function withIndexes(
  sample: AccountSample,
  policies: Map<string, number>,
): { sample: AccountSample | IndexedSample; unknown: string[] } {
  const unknown = sample.policies.filter((p) => !policies.has(p.name.toLowerCase())).map((p) => p.name);
  if (unknown.length > 0) return { sample, unknown };
  const { policies: named, ...totals } = sample;
  return {
    sample: {
      ...totals,
      policies: named.map(({ name, ...stats }) => ({ index: policies.get(name.toLowerCase())!, ...stats })),
    },
    unknown,
  };
}

interface IndexedSample extends Omit<AccountSample, 'policies'> {
  policies: Array<Omit<PolicyStats, 'name'> & { index: number }>;
}

/** fetch says only "fetch failed"; its cause says why (ECONNREFUSED 127.0.0.1:8081, a timeout). */
const failureText = (e: unknown): string =>
  e instanceof Error ? ((e.cause as Error | undefined)?.message ?? e.message) : String(e);

async function login(cluster: ClusterInfo, config: CollectorConfig): Promise<string> {
  if (!config.utilizationUser || !config.utilizationPassword) {
    throw new Error(
      'CAIRN_UTILIZATION_USER and CAIRN_UTILIZATION_PASSWORD must name a superuser storage user of the cluster (its token HEADs every account).',
    );
  }
  const url = `${(config.utilizationAuthUrl ?? cluster.auth_url).replace(/\/+$/, '')}/v1.0`;
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { 'X-Auth-User': config.utilizationUser, 'X-Auth-Key': config.utilizationPassword },
      signal: AbortSignal.timeout(config.utilizationTimeoutMs),
    });
    await res.arrayBuffer();
  } catch (e) {
    // Named: it may be the cluster's public address, unreachable from here (CAIRN_UTILIZATION_AUTH_URL).
    throw new Error(`cannot reach the auth gateway at ${url}: ${failureText(e)}`);
  }
  const token = res.headers.get('x-auth-token');
  if (res.status !== 200 || !token)
    throw new Error(
      `the auth gateway at ${url} refused the utilization user '${config.utilizationUser}' (HTTP ${res.status})`,
    );
  return token;
}

class AccountFailure extends Error {}
/** Thrown out of a HEAD the round's signal abandoned: neither sampled nor failed. */
class Stopped extends Error {}

export async function collectStorageOnce(options: StorageCollectOptions): Promise<StorageCollectResult> {
  const { config } = options;
  if (!config.apiKey)
    throw new Error('CAIRN_API_KEY is not set: the collector needs "<operator>:<key>" to record utilization.');
  const t0 = Date.now();
  const sampledAt = (options.now ?? (() => new Date()))();
  const cluster = await findCluster(config, options.cluster);
  let token = await login(cluster, config);
  let relogin: Promise<string> | null = null;
  const storageBase = (config.utilizationStorageUrl ?? cluster.storage_url).replace(/\/+$/, '');
  let policies = await readPolicies(config, cluster.id);
  // A name not in the list may be a policy reported since the round began: read the list once more.
  let reread: Promise<Map<string, number>> | null = null;
  const indexed = async (sample: AccountSample): Promise<IndexedSample> => {
    let r = withIndexes(sample, policies);
    if (r.unknown.length > 0) {
      reread ??= readPolicies(config, cluster.id).then((p) => (policies = p));
      r = withIndexes(sample, await reread);
    }
    if (r.unknown.length > 0) {
      throw new AccountFailure(
        `${sample.account}: unknown storage policy ${r.unknown.map((n) => `'${n}'`).join(', ')} (the cluster's policies are reported by 'cairn capacity collect'); left out of this round`,
      );
    }
    return r.sample as IndexedSample;
  };

  const { signal } = options;
  const head = (account: string): Promise<AccountSample> =>
    pRetry(
      async () => {
        if (signal?.aborted) throw new pRetry.AbortError(new Stopped());
        const used = token;
        let res: Response;
        try {
          const timeout = AbortSignal.timeout(config.utilizationTimeoutMs);
          res = await fetch(`${storageBase}/${encodeURIComponent(account)}`, {
            method: 'HEAD',
            headers: { 'X-Auth-Token': used },
            signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
          });
          await res.arrayBuffer();
        } catch (e) {
          if (signal?.aborted) throw new pRetry.AbortError(new Stopped());
          throw unreachable(e);
        }
        if (res.status === 404) return { account, bytes_used: 0, object_count: 0, container_count: 0, policies: [] };
        if (res.status >= 200 && res.status < 300) return sampleFromHeaders(account, res.headers);
        if (res.status === 401) {
          // The token expired: one new login for all workers.
          if (token === used) relogin ??= login(cluster, config).finally(() => (relogin = null));
          token = await (relogin ?? Promise.resolve(token));
        }
        const failure = new Error(`HTTP ${res.status}`);
        // Forbidden stays forbidden: no retry.
        throw res.status === 403 ? new pRetry.AbortError(failure) : failure;
      },
      { ...BACKOFF, retries: config.utilizationRetries },
    ).catch((e: unknown) => {
      throw e instanceof Stopped ? e : new AccountFailure(`${account}: ${e instanceof Error ? e.message : String(e)}`);
    });

  let accounts = 0;
  let sampled = 0;
  let failed = 0;
  const firstFailures: string[] = [];
  let total: number | null = null;
  let after: string | undefined;
  let lastProgress = 0;
  const progress = (force = false) => {
    if (!force && Date.now() - lastProgress < 2000) return;
    lastProgress = Date.now();
    options.progress(
      `cluster ${cluster.id}: ${accounts}${total === null ? '' : `/${total}`} accounts, ${sampled} sampled, ${failed} failed, ${Math.round((Date.now() - t0) / 1000)} s`,
    );
  };

  let samples: IndexedSample[] = [];
  const postSamples = async () => {
    if (samples.length === 0) return;
    const posted = await api(config, 'POST', `/api/v1/clusters/${cluster.id}/utilization/storage/`, {
      interval: options.interval,
      sampled_at: sampledAt.toISOString(),
      samples,
    });
    if (posted.status !== 200) throw apiError('recording storage samples', posted);
    samples = [];
  };

  while (!signal?.aborted) {
    const page = await api(
      config,
      'GET',
      `/api/v1/clusters/${cluster.id}/utilization/accounts/?limit=${PAGE}${after === undefined ? '' : `&account__gt=${encodeURIComponent(after)}`}`,
    );
    if (page.status !== 200) throw apiError('listing the accounts to collect', page);
    const body = page.json as { meta: { total_count: number }; objects: Array<{ account: string }> };
    if (total === null) total = body.meta.total_count;
    const names = body.objects.map((o) => o.account);
    if (names.length === 0) break;
    const limit = pLimit(config.utilizationConcurrency);
    const one = async (account: string) => {
      if (signal?.aborted) return;
      try {
        samples.push(await indexed(await head(account)));
        sampled++;
      } catch (e) {
        if (e instanceof Stopped) return;
        // One summary per round instead of a line per account: a cluster-wide outage fails thousands.
        failed++;
        if (firstFailures.length < FAILURES_SHOWN) firstFailures.push(e instanceof Error ? e.message : String(e));
      }
      accounts++;
      progress();
    };
    await Promise.all(names.map((account) => limit(() => one(account))));
    if (samples.length >= POST_SAMPLES) await postSamples();
    if (signal?.aborted || names.length < PAGE) break;
    after = names[names.length - 1];
  }
  await postSamples();
  progress(true);
  const stopped = signal?.aborted === true && (total === null || accounts < total);
  return {
    clusterId: cluster.id,
    accounts,
    sampled,
    failed,
    firstFailures,
    seconds: (Date.now() - t0) / 1000,
    stopped,
  };
}
