import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';

/**
 * The gateway's Redis connection, whatever stands behind REDIS_URL. Everything the gateway sends
 * touches a single key per command (or per MULTI), so the same code is correct on one server, on a
 * Sentinel-managed master and on a Redis Cluster.
 */
export type RedisClient = Redis | Cluster;

export interface RedisNode {
  host: string;
  port: number;
}

/**
 * What a REDIS_URL names. Forms (the `+sentinel` one follows the `redis+sentinel://` convention of
 * the Python Redis-Sentinel-Url package and Prefect; `s` in the scheme means TLS everywhere):
 *   redis://[user:pass@]host[:6379][/db]                      one server (handed to ioredis as is)
 *   rediss://…                                                the same over TLS
 *   redis+cluster://[user:pass@]host1[:6379][,host2[:port]…]  Redis Cluster seed nodes
 *   rediss+cluster://…                                        the same over TLS
 *   redis+sentinel://[user:pass@]s1[:26379][,s2[:port]…]/<master-name>[/db]
 *       [?sentinel_username=…&sentinel_password=…]            Sentinel set; user:pass is for the data nodes
 *   rediss+sentinel://…                                       the same over TLS (data nodes and sentinels)
 */
export type RedisTarget =
  | { kind: 'single'; url: string }
  | { kind: 'cluster'; tls: boolean; nodes: RedisNode[]; username?: string; password?: string }
  | {
      kind: 'sentinel';
      tls: boolean;
      sentinels: RedisNode[];
      name: string;
      db: number;
      username?: string;
      password?: string;
      sentinelUsername?: string;
      sentinelPassword?: string;
    };

/** A malformed REDIS_URL. The message never contains the URL or any part of it (it may hold a password). */
export class RedisUrlError extends Error {}

const SCHEME = /^(rediss?)(?:\+(cluster|sentinel))?:\/\//i;
const HOSTNAME = /^[A-Za-z0-9_][A-Za-z0-9_-]{0,62}(?:\.[A-Za-z0-9_-]{1,63})*\.?$/;
const IPV6 = /^[0-9A-Fa-f:.]+$/;
const MASTER_NAME = /^[A-Za-z0-9._-]{1,128}$/;
const SENTINEL_PARAMS = new Set(['sentinel_username', 'sentinel_password']);

function fail(reason: string): never {
  throw new RedisUrlError(reason);
}

/** Names a query parameter in a message only when it looks like a parameter name (not a pasted secret). */
function paramName(key: string): string {
  return /^[A-Za-z_]{1,40}$/.test(key) ? `the query parameter ${key}` : 'a query parameter';
}

function decode(part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return fail(`the ${what} is not valid percent-encoding`);
  }
}

function parseNode(text: string, defaultPort: number): RedisNode {
  let host: string;
  let portText: string | undefined;
  if (text.startsWith('[')) {
    const end = text.indexOf(']');
    if (end < 0) fail('an IPv6 address opened with [ is not closed with ]');
    host = text.slice(1, end);
    if (!IPV6.test(host) || !host.includes(':')) fail('a bracketed host is not an IPv6 address');
    const rest = text.slice(end + 1);
    if (rest !== '' && !rest.startsWith(':')) fail('an IPv6 address in brackets may only be followed by :port');
    portText = rest === '' ? undefined : rest.slice(1);
  } else {
    const colon = text.indexOf(':');
    host = colon < 0 ? text : text.slice(0, colon);
    portText = colon < 0 ? undefined : text.slice(colon + 1);
    if (host === '') fail('a host in the list is empty (check for a stray comma)');
    if (!HOSTNAME.test(host)) fail('a host is not a valid hostname or IP address (IPv6 addresses go in brackets)');
  }
  if (portText === undefined) return { host, port: defaultPort };
  if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535)
    fail('a port is not a number from 1 to 65535');
  return { host, port: Number(portText) };
}

/** Parses and checks a REDIS_URL; throws RedisUrlError with a reason that does not echo the URL. */
export function parseRedisUrl(url: string): RedisTarget {
  const scheme = SCHEME.exec(url);
  if (!scheme)
    fail(
      `the scheme must be one of redis://, rediss://, redis+cluster://, rediss+cluster://, redis+sentinel://, rediss+sentinel://`,
    );
  const tls = scheme[1]!.toLowerCase() === 'rediss';
  const topology = scheme[2]?.toLowerCase() as 'cluster' | 'sentinel' | undefined;
  if (!topology) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return fail('it is not a valid URL');
    }
    if (!parsed.hostname) fail('it names no host');
    if (parsed.pathname !== '' && parsed.pathname !== '/' && !/^\/\d{1,5}$/.test(parsed.pathname))
      fail('the path may only be a database number, e.g. /0');
    return { kind: 'single', url };
  }

  let rest = url.slice(scheme[0].length);
  if (rest.includes('#')) fail('a fragment (#…) is not allowed');
  let query = '';
  const q = rest.indexOf('?');
  if (q >= 0) {
    query = rest.slice(q + 1);
    rest = rest.slice(0, q);
  }
  const slash = rest.indexOf('/');
  const authority = slash < 0 ? rest : rest.slice(0, slash);
  const path = slash < 0 ? '' : rest.slice(slash);
  const at = authority.lastIndexOf('@');
  const userinfo = at < 0 ? undefined : authority.slice(0, at);
  const hostList = at < 0 ? authority : authority.slice(at + 1);
  if (hostList === '') fail(`it names no ${topology === 'cluster' ? 'cluster node' : 'sentinel'}`);

  const credentials: { username?: string; password?: string } = {};
  if (userinfo !== undefined) {
    const colon = userinfo.indexOf(':');
    const user = decode(colon < 0 ? userinfo : userinfo.slice(0, colon), 'user name');
    const password = colon < 0 ? undefined : decode(userinfo.slice(colon + 1), 'password');
    if (user) credentials.username = user;
    if (password) credentials.password = password;
  }
  const nodes = hostList.split(',').map((n) => parseNode(n, topology === 'cluster' ? 6379 : 26379));
  const params = new URLSearchParams(query);

  if (topology === 'cluster') {
    if (path !== '' && path !== '/' && path !== '/0') fail('a Redis Cluster has only database 0: drop the path');
    for (const key of params.keys()) fail(`${paramName(key)} is not supported: redis+cluster:// takes no options`);
    return { kind: 'cluster', tls, nodes, ...credentials };
  }

  const segments = path.split('/').slice(1);
  const name = segments[0] === undefined ? '' : decode(segments[0], 'master name');
  if (name === '')
    fail(
      'a Sentinel URL needs the master name as its path, e.g. redis+sentinel://sentinel1:26379,sentinel2:26379/mymaster',
    );
  if (!MASTER_NAME.test(name)) fail('the master name may only hold letters, digits, ".", "_" and "-" (at most 128)');
  if (segments.length > 2 || (segments.length === 2 && !/^\d{1,5}$/.test(segments[1]!)))
    fail('after the master name the path may only hold a database number, e.g. /mymaster/0');
  for (const key of params.keys()) {
    if (!SENTINEL_PARAMS.has(key))
      fail(`${paramName(key)} is not supported: redis+sentinel:// takes sentinel_username and sentinel_password`);
  }
  return {
    kind: 'sentinel',
    tls,
    sentinels: nodes,
    name,
    db: segments.length === 2 ? Number(segments[1]) : 0,
    ...credentials,
    ...(params.get('sentinel_username') ? { sentinelUsername: params.get('sentinel_username')! } : {}),
    ...(params.get('sentinel_password') ? { sentinelPassword: params.get('sentinel_password')! } : {}),
  };
}

/**
 * Reconnection delay: grows by 200 ms per attempt up to 1 s, and never gives up. The cap keeps
 * recovery within about a second of Redis coming back, however long it was away.
 */
const backoff = (attempt: number): number => Math.min(attempt * 200, 1_000);

/**
 * Retry settings. A command waits for at most this many reconnection attempts (about 1.2 s of
 * backoff plus connect timeouts) before it fails, so a Redis outage turns into quick 503s rather
 * than requests that hang.
 */
export const RETRIES_PER_REQUEST = 3;
const CONNECT_TIMEOUT_MS = 5_000;
const COMMAND_TIMEOUT_MS = 1_500;

/**
 * A Redis client for REDIS_URL that connects on first use and keeps retrying with a capped backoff,
 * so a Redis restart (or a Sentinel failover) delays requests briefly instead of failing them all;
 * a command waits for at most RETRIES_PER_REQUEST reconnection attempts before it fails.
 * Connection errors are logged by message only: the URL (which may hold a password) never is.
 */
export function createRedis(url: string, log: Logger, ca?: string): RedisClient {
  const target = parseRedisUrl(url);
  // With CAIRN_REDIS_CA_FILE, certificates are verified against that CA instead of the system's.
  const tls = ca ? { ca } : {};
  const common = {
    lazyConnect: true,
    // Commands issued in the same tick (a login's reads, a validation's two lookups, other
    // requests') go out in one write: socket writes were a large share of the gateway's CPU.
    enableAutoPipelining: true,
  } as const;
  // commandTimeout: a command also fails (a 503) after 1.5 s, whether queued while reconnecting or
  // sent to a Redis that does not answer; retries alone let it wait for several backoff rounds
  // (and connect timeouts of 5 s each), longer than any client waits. With auto-pipelining a command
  // may first wait for the pipeline in flight to time out: at most 2 × 1.5 s in all.
  const perNode = {
    connectTimeout: CONNECT_TIMEOUT_MS,
    maxRetriesPerRequest: RETRIES_PER_REQUEST,
    commandTimeout: COMMAND_TIMEOUT_MS,
  } as const;
  let client: RedisClient;
  if (target.kind === 'single') {
    // ioredis turns TLS on for rediss:// by itself; the CA is given for it.
    client = new Redis(url, {
      ...common,
      ...perNode,
      retryStrategy: backoff,
      ...(/^rediss:/i.test(url) ? { tls } : {}),
    });
  } else if (target.kind === 'sentinel') {
    const options: RedisOptions = {
      ...common,
      ...perNode,
      retryStrategy: backoff,
      sentinels: target.sentinels,
      name: target.name,
      db: target.db,
      ...(target.username ? { username: target.username } : {}),
      ...(target.password ? { password: target.password } : {}),
      ...(target.sentinelUsername ? { sentinelUsername: target.sentinelUsername } : {}),
      ...(target.sentinelPassword ? { sentinelPassword: target.sentinelPassword } : {}),
      // Past a few rounds over every sentinel, give up this connection attempt: the connection
      // closes, retryStrategy schedules the next one, and waiting commands count it against
      // maxRetriesPerRequest instead of waiting for the sentinels forever.
      sentinelRetryStrategy: (attempt) => (attempt > RETRIES_PER_REQUEST ? null : backoff(attempt)),
      // Sentinels announce a new master (+switch-master): reconnect at once instead of at the next error.
      failoverDetector: true,
      // A demoted master answers writes with READONLY: reconnect (to the master Sentinel names) and resend.
      reconnectOnError: (err) => (err.message.startsWith('READONLY') ? 2 : false),
      ...(target.tls ? { tls, enableTLSForSentinelMode: true, sentinelTLS: tls } : {}),
    };
    client = new Redis(options);
  } else {
    client = createCluster(target, common, perNode, log, tls);
  }
  client.on('error', (err: Error) => log.warn({ err: { message: err.message } }, 'redis connection error'));
  return client;
}

/** Clients closeRedis was asked to end: a Cluster that gave up waiting is not reconnected then. */
const closing = new WeakSet<RedisClient>();

function createCluster(
  target: Extract<RedisTarget, { kind: 'cluster' }>,
  common: { lazyConnect: true; enableAutoPipelining: true },
  perNode: { connectTimeout: number; maxRetriesPerRequest: number },
  log: Logger,
  tls: { ca?: string },
): Cluster {
  // The cluster object keeps its own queue while no node is reachable, and ioredis fails those
  // commands only when the cluster ends. So past RETRIES_PER_REQUEST attempts the retry strategy
  // says stop (null): ioredis fails what waits ("None of startup nodes is available") and ends the
  // cluster; commands sent meanwhile fail at once ("Cluster is ended."). A moment later the
  // 'end' handler below connects again, for the commands to come.
  let gaveUp = false;
  const options: ClusterOptions = {
    ...common,
    clusterRetryStrategy(attempt: number) {
      if (attempt <= RETRIES_PER_REQUEST) return backoff(attempt);
      gaveUp = true;
      return null;
    },
    redisOptions: {
      ...perNode,
      ...(target.username ? { username: target.username } : {}),
      ...(target.password ? { password: target.password } : {}),
      ...(target.tls ? { tls } : {}),
    },
  };
  const cluster = new Cluster(target.nodes, options);
  cluster.on('end', () => {
    if (!gaveUp || closing.has(cluster)) return;
    gaveUp = false;
    const again = setTimeout(
      () => {
        if (!closing.has(cluster) && cluster.status === 'end') cluster.connect().catch(() => undefined);
      },
      backoff(RETRIES_PER_REQUEST + 1),
    );
    again.unref();
  });
  // Per-node errors come with the node's host:port (no secret in it).
  cluster.on('node error', (err: Error, node: string) =>
    log.warn({ err: { message: err.message }, node }, 'redis cluster node error'),
  );
  return cluster;
}

/**
 * Ends a Redis client: a connected one after its pending replies (QUIT), any other at once.
 * Resolves when the client has ended, or after `waitMs` at the latest. A client waiting to
 * reconnect has no socket left: disconnecting cancels the reconnection and there is nothing to wait for.
 */
export async function closeRedis(redis: RedisClient, waitMs = 2_000): Promise<void> {
  closing.add(redis);
  if (redis.status === 'end') return;
  const idle = redis.status === 'reconnecting';
  let timer: NodeJS.Timeout | undefined;
  const ended = new Promise<void>((resolve) => {
    redis.once('end', resolve);
    timer = setTimeout(resolve, waitMs);
  });
  if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
  else redis.disconnect();
  if (!idle) await ended;
  clearTimeout(timer);
  // QUIT ends the data connection only: the Sentinel connector's own connections to the sentinels
  // (failoverDetector) would keep reconnecting after the sentinels go away. disconnect() ends them.
  // Only there: on a client already ended it also arms a 2 s timer to destroy the closed socket,
  // which keeps the process alive that long after everything else is done.
  if (redis instanceof Redis && redis.options.sentinels) redis.disconnect();
}
