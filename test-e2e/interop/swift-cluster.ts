/**
 * A real single-node OpenStack Swift (Debian's Swift 2.30 packages) on loopback, for interop tests.
 *
 * `startSwiftCluster()` builds rings with /usr/bin/swift-ring-builder, writes a swift.conf and one
 * config per server into a fresh temp dir, and starts memcached plus the account, container, object
 * and proxy servers (one worker each, all on 127.0.0.1, free ports); the servers start while the
 * rings are built and wait for them after importing Swift. `addProxy()` starts one more proxy, with
 * settings of its own, in front of the same storage servers. No replicators, updaters or
 * auditors run, except in the all-in-one mode (`allInOne`) for ring tests: at least 6 object devices
 * and swift-object-replicator (ssync, passes seconds apart) plus the account and container
 * replicators, so recon's replication stats, ring md5s and disk usage are real; `installRing()`
 * swaps a ring the way an operator copying rings to a node does. The all-in-one can also leave the
 * replicators to `runOnce()` (with the object updater, auditor and swift-recon-cron, as cron or
 * `swift-<daemon> --once` would run them), give each storage server its own ring directory (a
 * node's /etc/swift, so that one node can hold another ring), and `stopProcess()` /
 * `startProcess()` one server. The proxy pipeline is either
 * Swift's own `tempauth` or keystonemiddleware's `authtoken` + Swift's `keystoneauth` (what a proxy
 * validating Cairn auth-gateway tokens runs). Rings are built by swift-ring-builder's own code, all
 * in one Python process (./swift-ring-steps.py).
 *
 * Servers are started through ./swift-launcher.py so that Swift reads *our* swift.conf (policies,
 * hash prefix/suffix) instead of /etc/swift/swift.conf; see that file for why.
 *
 * Logs: every server logs over UDP (syslog format) to a socket this module listens on; those lines
 * and each process's stdout/stderr are kept in memory and appended to `<rootDir>/log/swift.log`.
 * `cluster.logs()` returns them, `cluster.dumpLogs()` prints them (use it when a test fails), and
 * `stop({ keepLogs: true })` copies the file out of the temp dir before it is removed.
 *
 * Prerequisite: ./install-swift.sh (Debian packages). Linux only (process groups, /usr/bin paths).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import * as dgram from 'node:dgram';
import {
  copyFileSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
  type WriteStream,
} from 'node:fs';
import * as net from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { fetchDiskUsage, fetchReplication, type DiskUsage } from '@cairn/swift-cluster';
import { reservePorts } from '../support/ports';

export const SWIFT_PYTHON = '/usr/bin/python3';
export const SWIFT_RING_BUILDER = '/usr/bin/swift-ring-builder';
export const SWIFT_CLI = '/usr/bin/swift';
export const MEMCACHED = '/usr/bin/memcached';
export const SWIFT_LAUNCHER = join(__dirname, 'swift-launcher.py');
export const SWIFT_RING_STEPS = join(__dirname, 'swift-ring-steps.py');
export const INSTALL_SCRIPT = join(__dirname, 'install-swift.sh');

const LOOPBACK = '127.0.0.1';
/** A PATH without pyenv shims or node_modules/.bin, so Debian's Python and Swift scripts are used. */
const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export type ProxyPipeline = 'tempauth' | 'keystone';

export interface TempauthUser {
  /** Account name without the reseller prefix: `test` gives the account `AUTH_test`. */
  account: string;
  user: string;
  key: string;
  /** tempauth groups, e.g. `['.admin']` (account owner) or `['.reseller_admin']`. */
  groups?: string[];
}

export interface KeystoneOptions {
  /** Identity URL the service user authenticates against, e.g. `http://127.0.0.1:5000/auth/v3`. */
  authUrl: string;
  /** Service user (keystonemiddleware's own credentials). */
  username: string;
  password: string;
  projectName: string;
  userDomainId?: string; // default 'default'
  projectDomainId?: string; // default 'default'
  /** Catalog interface ksm looks up the identity endpoint with; default 'public' (ksm's own default is 'internal'). */
  interface?: string;
  regionName?: string;
  /** For `WWW-Authenticate: Keystone uri="…"` on 401; default `authUrl`. */
  wwwAuthenticateUri?: string;
  /** Seconds ksm caches a validated token; default 1 so revocations show up almost at once. */
  tokenCacheTime?: number;
  /** Default true (Swift needs it for tempurl, ACLs and anonymous 401s from keystoneauth). */
  delayAuthDecision?: boolean;
  /** keystoneauth settings; defaults AUTH_, ['admin', 'swiftoperator'], ResellerAdmin. */
  resellerPrefix?: string;
  operatorRoles?: string[];
  resellerAdminRole?: string;
  /** Extra raw settings for [filter:authtoken] / [filter:keystoneauth]. */
  authtokenExtra?: Record<string, string>;
  keystoneauthExtra?: Record<string, string>;
  /** S3 API through s3api + s3token, validated by the identity service's `/s3tokens`. */
  s3?: S3Options;
}

export interface S3Options {
  /** s3api's `location`: the region S3 clients sign V4 requests for; default 'us-east-1'. */
  location?: string;
  /**
   * Send the service user's token (the keystone options' username/password) with every s3tokens
   * call, as Swift releases with the s3tokens service-auth fix do; default true.
   */
  serviceAuth?: boolean;
  /** s3token's `secret_cache_duration` in seconds; default 0 (every request asks the gateway). */
  secretCacheDuration?: number;
  /** Extra raw settings for [filter:s3api] / [filter:s3token]. */
  s3apiExtra?: Record<string, string>;
  s3tokenExtra?: Record<string, string>;
}

export interface StoragePolicySpec {
  index: number;
  name: string;
  /** Exactly one policy is the default; when none says so, the lowest index is. */
  default?: boolean;
  deprecated?: boolean;
  aliases?: string[];
  /** Device names (directories under `<rootDir>/srv/node`); letters, digits, `.`, `-`. */
  devices: string[];
}

/** The all-in-one mode for ring tests (see `SwiftClusterOptions.allInOne`). */
export interface AllInOneOptions {
  /**
   * Devices d1…dN of the single storage policy (gold, index 0) when `policies` is not given;
   * default 6. The object ring must have at least 6 devices either way.
   */
  objectDevices?: number;
  /** Seconds between replication passes (the replicators' `interval`); default 1. */
  intervalSeconds?: number;
  /** Also run swift-account-replicator and swift-container-replicator; default true. */
  dbReplicators?: boolean;
  /**
   * Spare device directories after the ring's (d7, d8, … with 6 devices), in no ring: for tests
   * that add devices to the object ring. Default 0.
   */
  spareDevices?: number;
  /**
   * Mount a tmpfs of this many MiB on every device directory (ring and spare), so that recon's
   * /diskusage reports each device's own size and used bytes, as on a node with one disk per
   * device. Needs root (`mount -t tmpfs`); when mounting fails the devices stay plain directories
   * and `SwiftCluster.tmpfs` says why. Unmounted by stop(). Default: no tmpfs.
   */
  tmpfsMiB?: number;
  /**
   * Start the replicators with the cluster (default true). With false their config sections are
   * still written and `runOnce()` runs single passes: cheaper than passes every second, and a
   * replicator that never ran is what recon reports on a node where it is not running.
   */
  replicatorsRunning?: boolean;
  /**
   * Each storage server reads its rings from its own directory (`nodeSwiftDir(server)`, copies of
   * the rings), as each node of a real cluster has its own /etc/swift; `installRing(…, { node })`
   * then changes one node's ring alone. Default false: every server reads `swiftDir`.
   */
  nodeSwiftDirs?: boolean;
}

export interface SwiftClusterOptions {
  pipeline: ProxyPipeline;
  /**
   * All-in-one for ring tests: ≥ 6 object devices, swift-object-replicator with `sync_method =
   * ssync` (no rsync daemon) and a short `interval`, the account/container replicators, all writing
   * recon stats to `<rootDir>/cache`. `true` takes the defaults. Off by default (no replicators).
   */
  allInOne?: AllInOneOptions | true;
  /** min_part_hours of every ring built; default 1 (Swift's own default is 1 too). */
  minPartHours?: number;
  /** tempauth users; default one `test:tester` / `testing` with `.admin`. */
  tempauthUsers?: TempauthUser[];
  /** Required when `pipeline` is 'keystone'. */
  keystone?: KeystoneOptions;
  /** Default: `DEFAULT_POLICIES` (0 gold on d1,d2,d3 (default); 1 silver on d2,d3,d4). */
  policies?: StoragePolicySpec[];
  /** Ring partition power; default 8. */
  partPower?: number;
  /**
   * What makes swift.conf's `swift_hash_path_prefix` and `_suffix`; default random per cluster.
   * Fixed, with the rings' fixed seeds, the same object names land on the same partitions in
   * every run, for tests whose figures depend on where a few hundred objects fell.
   */
  hashPathSalt?: string;
  /**
   * Replaces the whole proxy pipeline (names of [filter:…] sections, ending in `proxy-server`).
   * Filters other than the built-in ones (catch_errors gatekeeper healthcheck proxy-logging cache
   * tempauth | authtoken keystoneauth) need their sections in `extraProxyConfig`.
   */
  proxyPipeline?: string[];
  /** Raw text appended to proxy-server.conf, e.g. `[filter:tempurl]\nuse = egg:swift#tempurl\n`. */
  extraProxyConfig?: string;
  /** Extra settings for [app:proxy-server]. */
  proxyAppSettings?: Record<string, string>;
  /** Extra settings for [filter:proxy-logging], such as `log_msg_template`. */
  proxyLoggingSettings?: Record<string, string>;
  /** Swift log level; default INFO. */
  logLevel?: 'DEBUG' | 'INFO' | 'WARNING' | 'ERROR';
  /** Default 60 s. */
  startTimeoutMs?: number;
  /** Also echo every log line to this process's stderr as it arrives (debugging). */
  echoLogs?: boolean;
}

export interface SwiftNode {
  server: 'account' | 'container' | 'object';
  ip: string;
  port: number;
  /** http://127.0.0.1:<port>/recon — e.g. `${reconUrl}/diskusage`. */
  reconUrl: string;
}

export interface SwiftCluster {
  /** http://127.0.0.1:<port> */
  proxyUrl: string;
  /** tempauth only: `${proxyUrl}/auth/v1.0`. */
  authUrl?: string;
  /** `${proxyUrl}/v1/AUTH_<account>`; an account already starting with the reseller prefix is kept as is. */
  storageUrl(account: string): string;
  pipeline: ProxyPipeline;
  /** The `[pipeline:main]` the proxy runs. */
  proxyPipeline: string[];
  rootDir: string;
  /** Holds swift.conf, the *.conf of each server, *.builder and *.ring.gz. */
  swiftDir: string;
  /** The `devices` dir of every storage server: one subdirectory per device, each with `.ismount`. */
  devicesDir: string;
  devices: string[];
  /** The all-in-one's spare device directories (in no ring), e.g. ['d7', 'd8']. */
  spareDevices: string[];
  /** With `tmpfsMiB`: whether each device is its own tmpfs, or why not. */
  tmpfs: { mounted: true } | { mounted: false; reason: string };
  policies: StoragePolicySpec[];
  ports: { proxy: number; account: number; container: number; object: number; memcached: number; log: number };
  /** Storage nodes (recon is served on each). */
  nodes: { account: SwiftNode; container: SwiftNode; object: SwiftNode };
  /** Names of the replicator processes running (empty unless `allInOne`). */
  replicators: string[];
  /**
   * Puts a ring file (a path or its bytes) in place as `<swiftDir>/<ring>.ring.gz`, atomically
   * (temp file + rename) and with a fresh mtime; the servers and replicators notice the changed
   * mtime on their own (object replicator within `ring_check_interval` = 1 s here, Ring objects
   * within their 15 s reload time). `ring` is 'object', 'object-1', 'container' or 'account'.
   */
  installRing(source: string | Buffer, ring?: string, opts?: { node?: SwiftNode['server'] }): InstalledRing;
  /** Where a storage server reads its rings: its own directory with `nodeSwiftDirs`, else `swiftDir`. */
  nodeSwiftDir(server: SwiftNode['server']): string;
  /**
   * All-in-one only: one pass of a daemon (`swift-<daemon> --once`: object-replicator,
   * container-replicator, account-replicator, object-updater, object-auditor) or one run of
   * swift-recon-cron (counts async pendings into the recon cache), to completion. Rejects when it
   * exits non-zero.
   */
  runOnce(daemon: OnceDaemon): Promise<void>;
  /** Starts a server stopped by `stopProcess()` again and waits until it answers its healthcheck. */
  startProcess(name: string): Promise<void>;
  /** The object server's `GET /recon/diskusage` (through @cairn/swift-cluster's reader). */
  diskUsage(): Promise<DiskUsage[]>;
  /** The last completed replication pass recon reports for `type`, or null before the first. */
  replicationPass(type?: 'object' | 'container' | 'account'): Promise<ReplicationPass | null>;
  /**
   * Waits until recon reports a replication pass of `type` (default object) that began after
   * `after` and has finished; rejects after `timeoutMs` (default 30 s) naming what it last saw.
   */
  waitForReplicationPass(
    after: Date,
    opts?: { type?: 'object' | 'container' | 'account'; timeoutMs?: number },
  ): Promise<ReplicationPass>;
  /** Stops one process (by the name in `pids()`, e.g. 'object-server') and waits until it is gone. */
  stopProcess(name: string): Promise<void>;
  /**
   * Freezes one process group (SIGSTOP) or lets it go on (SIGCONT): e.g. hold the object replicator
   * still so that no pass can begin and end between a ring write and a check that follows it.
   */
  pauseProcess(name: string): void;
  resumeProcess(name: string): void;
  /**
   * Starts one more proxy-server (with its own memcached) in front of the same storage servers and
   * rings, with its own pipeline and auth settings: what a second cluster costs, without a second
   * set of storage servers. Resolves with the cluster as that proxy's clients see it (its proxyUrl,
   * authUrl, storageUrl, pipeline, ports); its `stop()` stops only that proxy, and the cluster's
   * stop() stops it too. It logs into the same logs() as `proxy-server-<n>`.
   */
  addProxy(options: SwiftProxyOptions): Promise<SwiftCluster>;
  /** How long startSwiftCluster took (rings, configs, processes, readiness), in ms; for addProxy, its own start. */
  startedInMs: number;
  /** Path of the log file (inside rootDir, so gone after stop() unless keepLogs). */
  logFile: string;
  /** Every log line so far (UDP syslog from the servers, and stdout/stderr of every process). */
  logs(): string;
  /** Prints `logs()` (or its last `lastLines`) to stderr with a header. */
  dumpLogs(lastLines?: number): void;
  /** pids of the process-group leaders (each server runs as its own process group). */
  pids(): Record<string, number | undefined>;
  /**
   * Kills every process (SIGTERM to each process group, SIGKILL after 5 s) and removes rootDir.
   * With `keepLogs` the log is first copied to `${os.tmpdir()}/cairn-swift-<time>.log`, whose path is returned.
   */
  stop(opts?: { keepLogs?: boolean }): Promise<string | undefined>;
}

export const DEFAULT_POLICIES: StoragePolicySpec[] = [
  { index: 0, name: 'gold', default: true, devices: ['d1', 'd2', 'd3'] },
  { index: 1, name: 'silver', devices: ['d2', 'd3', 'd4'] },
];

export const DEFAULT_TEMPAUTH_USERS: TempauthUser[] = [
  { account: 'test', user: 'tester', key: 'testing', groups: ['.admin'] },
];

export const ALL_IN_ONE_MIN_OBJECT_DEVICES = 6;

export type OnceDaemon =
  | 'object-replicator'
  | 'container-replicator'
  | 'account-replicator'
  | 'object-updater'
  | 'object-auditor'
  | 'recon-cron';

export interface InstalledRing {
  /** Where it now is: `<swiftDir>/<ring>.ring.gz`. */
  path: string;
  /** md5 (hex) of the file, as recon's /recon/ringmd5 reports it. */
  md5: string;
  /** Its new mtime (what Swift's servers and replicators compare to notice a new ring). */
  writtenAt: Date;
}

/** What recon's `/recon/replication/<type>` says of the last completed pass. */
export interface ReplicationPass {
  /** When the pass ended (`object_replication_last` or `replication_last`). */
  finishedAt: Date;
  /**
   * When it began: the end minus its duration (`object_replication_time` in minutes, the account and
   * container replicators' `replication_time` in seconds).
   */
  startedAt: Date;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Environment for Swift's Python processes: nothing inherited but HOME (no OS_*, ST_*, PYTHON*, pyenv). */
function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: SYSTEM_PATH,
    HOME: process.env.HOME ?? '/tmp',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    PYTHONNOUSERSITE: '1',
    PYTHONUNBUFFERED: '1',
    ...extra,
  };
}

/**
 * Runs python-swiftclient's `swift` CLI (/usr/bin/swift) with a clean environment: only `env` is
 * passed on (plus PATH/HOME/locale), so OS_* / ST_* variables of the test process never leak in.
 */
export function swiftCli(
  args: string[],
  env: Record<string, string> = {},
  opts: { cwd?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  return runCommand(SWIFT_CLI, args, { env: cleanEnv(env), cwd: opts.cwd, timeoutMs: opts.timeoutMs ?? 60_000 });
}

export interface RingBuilderResult {
  /** The arguments after `swift-ring-builder`. */
  args: string[];
  code: number;
  /** 0, or 1 for a rebalance with warnings (e.g. few devices); 2 and more are errors. */
  ok: boolean;
  output: string;
}

/**
 * Runs several swift-ring-builder commands (each `[builderFile, command, ...args]`) in one Python
 * process through ./swift-ring-steps.py, stopping after the first error. A process per command costs
 * seconds each on a busy machine. Rejects only when the script itself fails.
 */
export async function swiftRingBuilderSteps(
  steps: string[][],
  opts: { tmpDir?: string; timeoutMs?: number } = {},
): Promise<RingBuilderResult[]> {
  const dir = opts.tmpDir ?? mkdtempSync(join(tmpdir(), 'cairn-ring-steps-'));
  const stepsFile = join(dir, `ring-steps-${randomBytes(4).toString('hex')}.json`);
  writeFileSync(stepsFile, JSON.stringify(steps));
  try {
    const run = await runCommand(SWIFT_PYTHON, [SWIFT_RING_STEPS, stepsFile], {
      env: cleanEnv(),
      timeoutMs: opts.timeoutMs ?? 120_000,
    });
    const results = run.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => {
        const r = JSON.parse(l) as { args: string[]; code: number; output: string };
        return { ...r, ok: r.code === 0 || (r.args[1] === 'rebalance' && r.code === 1) };
      });
    if (run.code !== 0) throw new Error(`${SWIFT_RING_STEPS} exited ${run.code}:\n${run.stderr}`);
    return results;
  } finally {
    rmSync(opts.tmpDir ? stepsFile : dir, { recursive: true, force: true });
  }
}

function runCommand(
  cmd: string,
  args: string[],
  opts: { env: Record<string, string>; cwd?: string; timeoutMs: number },
): Promise<CliResult> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let child: ChildProcess;
    try {
      child = spawn(cmd, args, { env: opts.env, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
      resolve({ code: null, stdout, stderr: `spawn ${cmd} failed: ${String(e)}` });
      return;
    }
    const timer = setTimeout(() => {
      stderr += `\n[killed after ${opts.timeoutMs} ms]`;
      child.kill('SIGKILL');
    }, opts.timeoutMs);
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', (e) => {
      clearTimeout(timer);
      resolve({ code: null, stdout, stderr: `${stderr}\nspawn ${cmd} failed: ${e.message}` });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Distinct loopback ports of this jest worker's own (../support/ports.ts): no other file races for them. */
function freePorts(n: number): Promise<number[]> {
  return reservePorts(n, LOOPBACK);
}

function ini(sections: Array<[string, Record<string, string | number | boolean | undefined>]>): string {
  return sections
    .map(([name, kv]) => {
      const lines = Object.entries(kv)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => `${k} = ${String(v)}`);
      return `[${name}]\n${lines.join('\n')}\n`;
    })
    .join('\n');
}

function tempauthKey(u: TempauthUser): string {
  // `user_<account>_<user>` splits on "_"; names with other characters go through user64_ (base64
  // without padding: tempauth re-pads, and "=" would upset the config parser).
  const plain = /^[A-Za-z0-9.-]+$/;
  if (plain.test(u.account) && plain.test(u.user)) return `user_${u.account}_${u.user}`;
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64').replace(/=+$/, '');
  return `user64_${b64(u.account)}_${b64(u.user)}`;
}

function normalisePolicies(policies: StoragePolicySpec[]): StoragePolicySpec[] {
  if (policies.length === 0) throw new Error('startSwiftCluster: at least one storage policy is needed');
  const sorted = [...policies].sort((a, b) => a.index - b.index);
  if (sorted[0]!.index !== 0)
    throw new Error('startSwiftCluster: storage policy index 0 must be defined (it uses object.ring.gz)');
  const indexes = new Set<number>();
  for (const p of sorted) {
    if (indexes.has(p.index)) throw new Error(`startSwiftCluster: duplicate storage policy index ${p.index}`);
    indexes.add(p.index);
    if (p.devices.length === 0) throw new Error(`startSwiftCluster: storage policy ${p.name} has no devices`);
    for (const d of p.devices) {
      // "_" would be read as the start of the device meta by swift-ring-builder's add syntax.
      if (!/^[A-Za-z0-9.-]+$/.test(d)) throw new Error(`startSwiftCluster: bad device name ${JSON.stringify(d)}`);
    }
  }
  const defaults = sorted.filter((p) => p.default);
  if (defaults.length > 1) throw new Error('startSwiftCluster: more than one default storage policy');
  return sorted.map((p, i) => ({ ...p, default: defaults.length ? !!p.default : i === 0 }));
}

/** What shapes one proxy-server's config (the cluster's own proxy, or one from `addProxy`). */
export type SwiftProxyOptions = Pick<
  SwiftClusterOptions,
  | 'pipeline'
  | 'keystone'
  | 'tempauthUsers'
  | 'proxyPipeline'
  | 'extraProxyConfig'
  | 'proxyAppSettings'
  | 'proxyLoggingSettings'
>;

/** Where a proxy-server runs: its port, its memcached, the cluster's swift_dir and log socket. */
interface ProxyPlace {
  port: number;
  memcachedPort: number;
  swiftDir: string;
  user: string;
  logPort: number;
  logLevel: string;
  /** Its name in the logs (Swift's `log_name`); default proxy-server. */
  logName?: string;
}

/** A proxy-server.conf for these options. */
function proxyConfig(
  options: SwiftProxyOptions,
  at: ProxyPlace,
): { text: string; proxyPipeline: string[]; resellerPrefix: string } {
  // With S3, s3api and s3token sit between authtoken and keystoneauth (s3api refuses to start
  // otherwise): authtoken first, because it strips identity headers from every request it sees,
  // and would strip the ones s3token sets from the s3tokens answer if it came after.
  const s3 = options.pipeline === 'keystone' ? options.keystone!.s3 : undefined;
  const authFilters =
    options.pipeline === 'tempauth'
      ? ['tempauth']
      : s3
        ? ['authtoken', 's3api', 's3token', 'keystoneauth']
        : ['authtoken', 'keystoneauth'];
  const proxyPipeline = options.proxyPipeline ?? [
    'catch_errors',
    'gatekeeper',
    'healthcheck',
    'proxy-logging',
    'cache',
    ...authFilters,
    'proxy-logging',
    'proxy-server',
  ];
  const proxySections: Array<[string, Record<string, string | number | boolean | undefined>]> = [
    [
      'DEFAULT',
      {
        bind_ip: LOOPBACK,
        bind_port: at.port,
        workers: 1,
        user: at.user,
        swift_dir: at.swiftDir,
        bind_timeout: 10,
        log_udp_host: LOOPBACK,
        log_udp_port: at.logPort,
        log_level: at.logLevel,
        log_name: at.logName,
      },
    ],
    ['pipeline:main', { pipeline: proxyPipeline.join(' ') }],
    ['app:proxy-server', { use: 'egg:swift#proxy', account_autocreate: 'true', ...options.proxyAppSettings }],
    ['filter:catch_errors', { use: 'egg:swift#catch_errors' }],
    ['filter:gatekeeper', { use: 'egg:swift#gatekeeper' }],
    ['filter:healthcheck', { use: 'egg:swift#healthcheck' }],
    ['filter:proxy-logging', { use: 'egg:swift#proxy_logging', ...options.proxyLoggingSettings }],
    ['filter:cache', { use: 'egg:swift#memcache', memcache_servers: `${LOOPBACK}:${at.memcachedPort}` }],
  ];
  let resellerPrefix = 'AUTH_';
  if (options.pipeline === 'tempauth') {
    const users = options.tempauthUsers ?? DEFAULT_TEMPAUTH_USERS;
    const tempauth: Record<string, string> = { use: 'egg:swift#tempauth', reseller_prefix: 'AUTH' };
    for (const u of users) tempauth[tempauthKey(u)] = [u.key, ...(u.groups ?? [])].join(' ');
    proxySections.push(['filter:tempauth', tempauth]);
  } else {
    const k = options.keystone!;
    resellerPrefix = k.resellerPrefix ?? 'AUTH_';
    // The service user's keystoneauth1 password plugin options, as authtoken and s3token read them.
    const serviceAuth = {
      auth_type: 'password',
      auth_url: k.authUrl,
      username: k.username,
      password: k.password,
      project_name: k.projectName,
      user_domain_id: k.userDomainId ?? 'default',
      project_domain_id: k.projectDomainId ?? 'default',
      interface: k.interface ?? 'public',
    };
    proxySections.push([
      'filter:authtoken',
      {
        'paste.filter_factory': 'keystonemiddleware.auth_token:filter_factory',
        ...serviceAuth,
        www_authenticate_uri: k.wwwAuthenticateUri ?? k.authUrl,
        region_name: k.regionName,
        delay_auth_decision: String(k.delayAuthDecision ?? true),
        cache: 'swift.cache',
        token_cache_time: k.tokenCacheTime ?? 1,
        ...k.authtokenExtra,
      },
    ]);
    proxySections.push([
      'filter:keystoneauth',
      {
        use: 'egg:swift#keystoneauth',
        reseller_prefix: resellerPrefix,
        operator_roles: (k.operatorRoles ?? ['admin', 'swiftoperator']).join(', '),
        reseller_admin_role: k.resellerAdminRole ?? 'ResellerAdmin',
        ...k.keystoneauthExtra,
      },
    ]);
    if (s3) {
      proxySections.push([
        'filter:s3api',
        { use: 'egg:swift#s3api', location: s3.location ?? 'us-east-1', ...s3.s3apiExtra },
      ]);
      proxySections.push([
        'filter:s3token',
        {
          use: 'egg:swift#s3token',
          auth_uri: k.authUrl,
          reseller_prefix: resellerPrefix,
          delay_auth_decision: 'false',
          http_timeout: 10,
          secret_cache_duration: s3.secretCacheDuration ?? 0,
          ...((s3.serviceAuth ?? true) ? serviceAuth : {}),
          ...s3.s3tokenExtra,
        },
      ]);
    }
  }
  if (!resellerPrefix.endsWith('_')) resellerPrefix += '_';
  const text = ini(proxySections) + (options.extraProxyConfig ? `\n${options.extraProxyConfig}\n` : '');
  return { text, proxyPipeline, resellerPrefix };
}

interface ManagedProcess {
  name: string;
  /** How it was started, for startProcess(). */
  cmd: string;
  args: string[];
  child: ChildProcess;
  exited: boolean;
  exitInfo?: string;
  /** Stopped on purpose (stopProcess): its exit is no start-up failure. */
  stopped?: boolean;
  exitPromise: Promise<void>;
}

/** Starts a cluster and resolves once every server answers. On failure everything started is torn down. */
export async function startSwiftCluster(options: SwiftClusterOptions): Promise<SwiftCluster> {
  const t0 = Date.now();
  for (const bin of [
    SWIFT_PYTHON,
    SWIFT_RING_BUILDER,
    MEMCACHED,
    '/usr/bin/swift-proxy-server',
    '/usr/bin/swift-object-server',
  ]) {
    if (!existsSync(bin)) throw new Error(`startSwiftCluster: ${bin} is missing; run ${INSTALL_SCRIPT}`);
  }
  if (options.pipeline === 'keystone' && !options.keystone)
    throw new Error("startSwiftCluster: pipeline 'keystone' needs the keystone options");
  const aio = options.allInOne === true ? {} : options.allInOne;
  const aioDevices = aio?.objectDevices ?? ALL_IN_ONE_MIN_OBJECT_DEVICES;
  const policies = normalisePolicies(
    options.policies ??
      (aio
        ? [
            {
              index: 0,
              name: 'gold',
              default: true,
              devices: Array.from({ length: aioDevices }, (_, i) => `d${i + 1}`),
            },
          ]
        : DEFAULT_POLICIES),
  );
  if (aio && policies[0]!.devices.length < ALL_IN_ONE_MIN_OBJECT_DEVICES)
    throw new Error(
      `startSwiftCluster: the all-in-one needs at least ${ALL_IN_ONE_MIN_OBJECT_DEVICES} object devices (policy 0 has ${policies[0]!.devices.length})`,
    );
  const minPartHours = options.minPartHours ?? 1;
  const replicationInterval = aio?.intervalSeconds ?? 1;
  const replicatorNames = aio
    ? ['object-replicator', ...(aio.dbReplicators === false ? [] : ['container-replicator', 'account-replicator'])]
    : [];
  const replicatorsRunning = aio?.replicatorsRunning ?? true;
  const devices = [...new Set(policies.flatMap((p) => p.devices))].sort();
  const partPower = options.partPower ?? 8;
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  const logLevel = options.logLevel ?? 'INFO';

  const rootDir = mkdtempSync(join(tmpdir(), 'cairn-swift-'));
  const swiftDir = join(rootDir, 'etc');
  const devicesDir = join(rootDir, 'srv', 'node');
  const logDir = join(rootDir, 'log');
  const cacheDir = join(rootDir, 'cache');
  for (const d of [swiftDir, devicesDir, logDir, cacheDir, join(rootDir, 'run')]) mkdirSync(d, { recursive: true });
  const storageServers = ['account', 'container', 'object'] as const;
  const nodeSwiftDir = (server: SwiftNode['server']) =>
    aio?.nodeSwiftDirs ? join(rootDir, 'nodes', server, 'etc') : swiftDir;
  const spareDevices = aio?.spareDevices
    ? Array.from({ length: aio.spareDevices }, (_, i) => `d${policies[0]!.devices.length + i + 1}`).filter(
        (d) => !devices.includes(d),
      )
    : [];
  const mounts: string[] = [];
  let tmpfs: SwiftCluster['tmpfs'] = { mounted: false, reason: 'no tmpfsMiB option' };
  for (const dev of [...devices, ...spareDevices]) mkdirSync(join(devicesDir, dev));
  if (aio?.tmpfsMiB) {
    try {
      for (const dev of [...devices, ...spareDevices]) {
        execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${aio.tmpfsMiB}m`, `cairn-${dev}`, join(devicesDir, dev)], {
          stdio: 'pipe',
        });
        mounts.push(join(devicesDir, dev));
      }
      tmpfs = { mounted: true };
    } catch (e) {
      const stderr = (e as { stderr?: Buffer }).stderr?.toString().trim();
      tmpfs = { mounted: false, reason: `mount -t tmpfs failed: ${stderr || (e as Error).message}` };
      unmountAll(mounts);
    }
  }
  for (const dev of [...devices, ...spareDevices]) {
    // recon's /diskusage reports a directory as mounted only if it is a mount point or has this file.
    writeFileSync(join(devicesDir, dev, '.ismount'), '');
  }

  // ---- logging -------------------------------------------------------------------------------
  const logFile = join(logDir, 'swift.log');
  const logStream: WriteStream = createWriteStream(logFile, { flags: 'a' });
  const logLines: string[] = [];
  const addLog = (source: string, text: string) => {
    for (const raw of text.split('\n')) {
      const line = raw.replace(/\r$/, '');
      if (!line.trim()) continue;
      const entry = `${new Date().toISOString()} ${source}: ${line}`;
      logLines.push(entry);
      if (!logStream.closed && !logStream.destroyed) logStream.write(entry + '\n');
      if (options.echoLogs) process.stderr.write(entry + '\n');
    }
  };
  const udp = dgram.createSocket('udp4');
  udp.on('message', (msg) => {
    // Swift's SysLogHandler sends "<PRI>server-name: message\0"
    addLog(
      'udp',
      msg
        .toString('utf8')
        .replace(/\0+$/, '')
        .replace(/^<\d+>/, ''),
    );
  });
  await new Promise<void>((resolve, reject) => {
    udp.once('error', reject);
    udp.bind(0, LOOPBACK, () => resolve());
  });
  const logPort = udp.address().port;

  // ---- processes -----------------------------------------------------------------------------
  const procs: ManagedProcess[] = [];
  let stopped = false;
  const killAllSync = () => {
    for (const p of procs) if (!p.exited && p.child.pid) tryKillGroup(p.child.pid, 'SIGKILL');
    unmountAll(mounts);
  };
  // Last resort if the test process exits without stop() (e.g. jest killed on timeout).
  process.once('exit', killAllSync);

  const launch = (name: string, cmd: string, args: string[], env: Record<string, string> = {}): ManagedProcess => {
    // detached: each server becomes its own process group (Swift forks a worker), so stop() can
    // signal the whole group.
    const child = spawn(cmd, args, {
      cwd: rootDir,
      env: cleanEnv(env),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const p: ManagedProcess = { name, cmd, args, child, exited: false, exitPromise: Promise.resolve() };
    p.exitPromise = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        p.exited = true;
        p.exitInfo = signal ? `signal ${signal}` : `exit code ${code}`;
        if (!stopped) addLog(name, `*** exited (${p.exitInfo})`);
        resolve();
      });
      child.once('error', (e) => {
        p.exited = true;
        p.exitInfo = `spawn error ${e.message}`;
        addLog(name, `*** ${p.exitInfo}`);
        resolve();
      });
    });
    child.stdout!.on('data', (d: Buffer) => addLog(`${name}[stdout]`, d.toString()));
    child.stderr!.on('data', (d: Buffer) => addLog(`${name}[stderr]`, d.toString()));
    procs.push(p);
    return p;
  };

  const stopProcesses = async () => {
    stopped = true;
    await Promise.all(
      procs.map(async (p) => {
        const pid = p.child.pid;
        if (!pid) return;
        if (!p.exited) {
          tryKillGroup(pid, 'SIGTERM');
          tryKillGroup(pid, 'SIGCONT'); // a paused process (pauseProcess) acts on SIGTERM only once resumed
        }
        const deadline = Date.now() + 5_000;
        while (Date.now() < deadline && (!p.exited || groupAlive(pid))) await sleep(50);
        // SIGKILL whatever is left of the group (also forked workers whose parent already exited).
        if (groupAlive(pid)) tryKillGroup(pid, 'SIGKILL');
        await within(p.exitPromise, 2_000);
        const killDeadline = Date.now() + 2_000;
        while (Date.now() < killDeadline && groupAlive(pid)) await sleep(50);
      }),
    );
    process.removeListener('exit', killAllSync);
  };

  let finished = false;
  const stop = async (opts: { keepLogs?: boolean } = {}): Promise<string | undefined> => {
    if (finished) return undefined;
    finished = true;
    await stopProcesses();
    await new Promise<void>((resolve) => udp.close(() => resolve()));
    await new Promise<void>((resolve) => logStream.end(() => resolve()));
    let kept: string | undefined;
    if (opts.keepLogs) {
      kept = join(tmpdir(), `cairn-swift-${new Date().toISOString().replace(/[:.]/g, '-')}.log`);
      copyFileSync(logFile, kept);
    }
    unmountAll(mounts);
    rmSync(rootDir, { recursive: true, force: true });
    return kept;
  };

  /** Polls every check until all pass; fails at once when a process exits, or at the deadline. */
  const waitUntilServing = async (checks: ServingCheck[], deadline: number) => {
    let pending = checks;
    while (pending.length) {
      const dead = procs.filter((p) => p.exited && !p.stopped);
      if (dead.length)
        throw new Error(`Swift test cluster: ${dead.map((p) => `${p.name} ${p.exitInfo}`).join(', ')} during start-up`);
      if (Date.now() > deadline)
        throw new Error(
          `Swift test cluster did not come up within ${startTimeoutMs} ms; not answering: ${pending.map((c) => c.name).join(', ')}`,
        );
      const results = await Promise.all(pending.map((c) => c.probe()));
      pending = pending.filter((_, i) => !results[i]);
      if (pending.length) await sleep(200);
    }
  };
  /** Proves a proxy loaded our swift.conf (policy names), not /etc/swift/swift.conf. */
  const checkPolicies = async (proxyUrl: string) => {
    const info = (await (await fetch(`${proxyUrl}/info`, { signal: AbortSignal.timeout(5_000) })).json()) as {
      swift?: { policies?: Array<{ name: string }> };
    };
    const served = (info.swift?.policies ?? []).map((p) => p.name).sort();
    const wanted = policies
      .filter((p) => !p.deprecated)
      .map((p) => p.name)
      .sort();
    if (JSON.stringify(served) !== JSON.stringify(wanted)) {
      throw new Error(
        `Swift proxy serves storage policies ${JSON.stringify(served)}, expected ${JSON.stringify(wanted)} (swift.conf not picked up?)`,
      );
    }
  };

  try {
    const [proxyPort, accountPort, containerPort, objectPort, memcachedPort] = (await freePorts(5)) as [
      number,
      number,
      number,
      number,
      number,
    ];
    const ports = {
      proxy: proxyPort,
      account: accountPort,
      container: containerPort,
      object: objectPort,
      memcached: memcachedPort,
      log: logPort,
    };

    // ---- swift.conf and rings --------------------------------------------------------------
    const hash = options.hashPathSalt ?? randomBytes(8).toString('hex');
    writeFileSync(
      join(swiftDir, 'swift.conf'),
      ini([
        [
          'swift-hash',
          { swift_hash_path_prefix: `cairn-prefix-${hash}`, swift_hash_path_suffix: `cairn-suffix-${hash}` },
        ],
        ...policies.map((p): [string, Record<string, string | undefined>] => [
          `storage-policy:${p.index}`,
          {
            name: p.name,
            aliases: p.aliases?.length ? p.aliases.join(', ') : undefined,
            default: p.default ? 'yes' : undefined,
            deprecated: p.deprecated ? 'yes' : undefined,
          },
        ]),
      ]),
    );
    const zoneOf = (dev: string) => devices.indexOf(dev) + 1; // one zone per device: no dispersion warnings
    const rings: Array<{ file: string; port: number; devs: string[] }> = [
      { file: 'account', port: accountPort, devs: devices },
      { file: 'container', port: containerPort, devs: devices },
      ...policies.map((p) => ({
        file: p.index === 0 ? 'object' : `object-${p.index}`,
        port: objectPort,
        devs: p.devices,
      })),
    ];
    // All rings in one Python process (./swift-ring-steps.py calls swift-ring-builder's own main):
    // nine separate swift-ring-builder runs cost seconds each on a busy machine.
    const steps = rings.flatMap((r) => {
      const builder = join(swiftDir, `${r.file}.builder`);
      const replicas = Math.min(3, r.devs.length);
      return [
        [builder, 'create', String(partPower), String(replicas), String(minPartHours)],
        [builder, 'add', ...r.devs.flatMap((d) => [`r1z${zoneOf(d)}-${LOOPBACK}:${r.port}/${d}`, '100'])],
        [builder, 'rebalance', '--seed', '1'],
      ];
    });
    // Built while the processes below start: they import Swift (seconds of CPU each) and then wait
    // for ringsReady (swift-launcher.py's SWIFT_LAUNCHER_WAIT_FOR), created once every ring is written.
    const ringsBuilt = swiftRingBuilderSteps(steps, { tmpDir: rootDir });
    ringsBuilt.catch(() => undefined); // awaited below; this only keeps an early failure from being unhandled
    const ringsReady = join(rootDir, 'run', 'rings.ready');

    // ---- server configs --------------------------------------------------------------------
    const user = userInfo().username;
    const common = {
      bind_ip: LOOPBACK,
      workers: 1,
      user,
      swift_dir: swiftDir,
      devices: devicesDir,
      mount_check: 'false',
      disable_fallocate: 'true',
      bind_timeout: 10,
      log_udp_host: LOOPBACK,
      log_udp_port: logPort,
      log_level: logLevel,
    };
    // The replicators read their [<server>-replicator] section of the server's own config, like a
    // real node's; recon_cache_path is the recon middleware's, so /recon/replication sees their stats.
    const replicatorSection = (server: 'account' | 'container' | 'object') => {
      if (!replicatorNames.includes(`${server}-replicator`)) return [];
      const settings: Record<string, string | number> = {
        interval: replicationInterval,
        recon_cache_path: cacheDir,
        concurrency: 1,
      };
      if (server === 'object') {
        Object.assign(settings, {
          // ssync talks to the object servers' REPLICATION verb: no rsync daemon needed.
          sync_method: 'ssync',
          // How often a running pass looks at the ring's mtime (and aborts on a new ring).
          ring_check_interval: 1,
        });
      }
      const sections: Array<[string, Record<string, string | number>]> = [[`${server}-replicator`, settings]];
      if (server === 'object')
        sections.push(
          // For runOnce(): the updater sends async pendings to the container servers; the auditor
          // checks every object's checksum at once (files_per_second: no rate limit worth the name).
          ['object-updater', { interval: replicationInterval, recon_cache_path: cacheDir, concurrency: 1 }],
          [
            'object-auditor',
            { recon_cache_path: cacheDir, files_per_second: 10_000, bytes_per_second: 1_000_000_000, concurrency: 1 },
          ],
        );
      return sections;
    };
    for (const [server, port] of [
      ['account', accountPort],
      ['container', containerPort],
      ['object', objectPort],
    ] as const) {
      writeFileSync(
        join(swiftDir, `${server}-server.conf`),
        ini([
          ['DEFAULT', { ...common, swift_dir: nodeSwiftDir(server), bind_port: port }],
          ['pipeline:main', { pipeline: `healthcheck recon ${server}-server` }],
          [`app:${server}-server`, { use: `egg:swift#${server}` }],
          ['filter:healthcheck', { use: 'egg:swift#healthcheck' }],
          // recon_lock_path: swift-recon-cron's lock, under rootDir rather than the host's /var/lock.
          [
            'filter:recon',
            { use: 'egg:swift#recon', recon_cache_path: cacheDir, recon_lock_path: join(rootDir, 'run') },
          ],
          ...replicatorSection(server),
        ]),
      );
    }

    const proxy = proxyConfig(options, {
      port: proxyPort,
      memcachedPort,
      swiftDir,
      user,
      logPort,
      logLevel,
    });
    const { proxyPipeline, resellerPrefix } = proxy;
    writeFileSync(join(swiftDir, 'proxy-server.conf'), proxy.text);

    // ---- start -----------------------------------------------------------------------------
    launch('memcached', MEMCACHED, memcachedArgs(memcachedPort));
    for (const server of ['account', 'container', 'object', 'proxy'] as const) {
      launch(
        `${server}-server`,
        SWIFT_PYTHON,
        [SWIFT_LAUNCHER, swiftDir, server, join(swiftDir, `${server}-server.conf`)],
        { SWIFT_LAUNCHER_WAIT_FOR: ringsReady },
      );
    }
    for (const name of replicatorsRunning ? replicatorNames : []) {
      const server = name.replace('-replicator', '');
      launch(name, SWIFT_PYTHON, [SWIFT_LAUNCHER, swiftDir, name, join(swiftDir, `${server}-server.conf`)], {
        SWIFT_LAUNCHER_WAIT_FOR: ringsReady,
      });
    }

    const results = await ringsBuilt;
    for (const res of results) {
      const [builder, ...step] = res.args;
      addLog(
        'swift-ring-builder',
        `${builder!.slice(swiftDir.length + 1)} ${step.join(' ')} -> ${res.code}\n${res.output}`,
      );
    }
    const failed = results.find((r) => !r.ok);
    if (failed || results.length !== steps.length)
      throw new Error(
        failed
          ? `swift-ring-builder ${failed.args.join(' ')} failed (exit ${failed.code}):\n${failed.output}`
          : `${SWIFT_RING_STEPS} ran ${results.length} of ${steps.length} commands`,
      );
    for (const r of rings)
      if (!existsSync(join(swiftDir, `${r.file}.ring.gz`)))
        throw new Error(`swift-ring-builder did not write ${r.file}.ring.gz`);
    if (aio?.nodeSwiftDirs)
      for (const server of storageServers) {
        mkdirSync(nodeSwiftDir(server), { recursive: true });
        for (const r of rings)
          copyFileSync(join(swiftDir, `${r.file}.ring.gz`), join(nodeSwiftDir(server), `${r.file}.ring.gz`));
      }
    writeFileSync(ringsReady, '');

    const proxyUrl = `http://${LOOPBACK}:${proxyPort}`;
    const checks: ServingCheck[] = [
      { name: `memcached ${LOOPBACK}:${memcachedPort}`, probe: () => tcpOpen(memcachedPort) },
      ...(
        [
          ['account', accountPort],
          ['container', containerPort],
          ['object', objectPort],
          ['proxy', proxyPort],
        ] as const
      ).map(([server, port]) => ({
        name: `${server}-server http://${LOOPBACK}:${port}/healthcheck`,
        probe: () => httpOk(`http://${LOOPBACK}:${port}/healthcheck`),
      })),
    ];
    await waitUntilServing(checks, Date.now() + startTimeoutMs);
    await checkPolicies(proxyUrl);
    const startedInMs = Date.now() - t0;
    addLog('harness', `cluster ready in ${startedInMs} ms at ${proxyUrl} (pipeline ${proxyPipeline.join(' ')})`);

    const node = (server: SwiftNode['server'], port: number): SwiftNode => ({
      server,
      ip: LOOPBACK,
      port,
      reconUrl: `http://${LOOPBACK}:${port}/recon`,
    });
    const logs = () => logLines.join('\n');

    const writeRing = (dir: string, ring: string, bytes: Buffer): string => {
      const path = join(dir, `${ring}.ring.gz`);
      const previousMtime = existsSync(path) ? statSync(path).mtimeMs : undefined;
      const tmp = join(dir, `.${ring}.ring.gz.${process.pid}.tmp`);
      writeFileSync(tmp, bytes);
      // Swift compares mtimes exactly; make sure the new one differs even on a coarse clock.
      let mtime = new Date();
      if (previousMtime !== undefined && Math.abs(mtime.getTime() - previousMtime) < 1_000)
        mtime = new Date(previousMtime + 1_000);
      utimesSync(tmp, mtime, mtime);
      renameSync(tmp, path);
      return path;
    };
    const installRing = (
      source: string | Buffer,
      ring = 'object',
      opts: { node?: SwiftNode['server'] } = {},
    ): InstalledRing => {
      if (!/^(account|container|object(-\d+)?)$/.test(ring))
        throw new Error(
          `installRing: ${JSON.stringify(ring)} is not a ring name (object, object-N, container, account)`,
        );
      if (opts.node && !aio?.nodeSwiftDirs)
        throw new Error('installRing: { node } needs the all-in-one option nodeSwiftDirs');
      const bytes = typeof source === 'string' ? readFileSync(source) : source;
      // Without a node: the cluster's ring, on every node (the same dir when they share swiftDir).
      const dirs = opts.node
        ? [nodeSwiftDir(opts.node)]
        : [...new Set([swiftDir, ...storageServers.map((server) => nodeSwiftDir(server))])];
      const [path] = dirs.map((dir) => writeRing(dir, ring, bytes));
      addLog('harness', `installed ${ring}.ring.gz (${bytes.length} bytes) on ${opts.node ?? 'every node'}`);
      return { path: path!, md5: createHash('md5').update(bytes).digest('hex'), writtenAt: statSync(path!).mtime };
    };

    const portOf = { object: objectPort, container: containerPort, account: accountPort };
    const replicationPass = async (
      type: 'object' | 'container' | 'account' = 'object',
    ): Promise<ReplicationPass | null> => {
      const { lastMs, durationMs } = await fetchReplication(`http://${LOOPBACK}:${portOf[type]}`, type, {
        timeoutMs: 5_000,
      });
      if (lastMs === null) return null;
      return { finishedAt: new Date(lastMs), startedAt: new Date(lastMs - (durationMs ?? 0)) };
    };
    const waitForReplicationPass = async (
      after: Date,
      opts: { type?: 'object' | 'container' | 'account'; timeoutMs?: number } = {},
    ): Promise<ReplicationPass> => {
      const type = opts.type ?? 'object';
      const timeoutMs = opts.timeoutMs ?? 30_000;
      const deadline = Date.now() + timeoutMs;
      let seen: ReplicationPass | null = null;
      for (;;) {
        seen = await replicationPass(type);
        if (seen && seen.startedAt > after) return seen;
        if (Date.now() > deadline)
          throw new Error(
            `no ${type} replication pass began after ${after.toISOString()} and finished within ${timeoutMs} ms (last: ${
              seen ? `${seen.startedAt.toISOString()} – ${seen.finishedAt.toISOString()}` : 'none'
            })`,
          );
        await sleep(250);
      }
    };
    const processNamed = (name: string): ManagedProcess => {
      const p = procs.find((q) => q.name === name);
      if (!p) throw new Error(`no process named ${name} (have ${procs.map((q) => q.name).join(', ')})`);
      return p;
    };
    const signalProcess = (name: string, signal: NodeJS.Signals) => {
      const pid = processNamed(name).child.pid;
      if (pid) tryKillGroup(pid, signal);
      addLog('harness', `${signal} to ${name}`);
    };
    const runOnce = async (daemon: OnceDaemon): Promise<void> => {
      if (!aio) throw new Error('runOnce: only the all-in-one has daemon configs');
      const server = daemon === 'recon-cron' ? 'object' : daemon.split('-')[0]!;
      const t = Date.now();
      const run = await runCommand(
        SWIFT_PYTHON,
        [SWIFT_LAUNCHER, swiftDir, daemon, join(swiftDir, `${server}-server.conf`), 'once'],
        { env: cleanEnv(), cwd: rootDir, timeoutMs: 60_000 },
      );
      addLog(`${daemon}(once)`, `${run.stdout}\n${run.stderr}\nexited ${run.code} after ${Date.now() - t} ms`);
      if (run.code !== 0) throw new Error(`${daemon} --once exited ${run.code}:\n${run.stderr.slice(-2_000)}`);
    };
    const healthcheckPort: Record<string, number> = {
      'account-server': accountPort,
      'container-server': containerPort,
      'object-server': objectPort,
      'proxy-server': proxyPort,
    };
    const startProcess = async (name: string): Promise<void> => {
      const old = processNamed(name);
      if (!old.exited) throw new Error(`startProcess: ${name} is still running`);
      procs.splice(procs.indexOf(old), 1);
      const p = launch(name, old.cmd, old.args);
      const port = healthcheckPort[name];
      const deadline = Date.now() + 30_000;
      while (port !== undefined && !(await httpOk(`http://${LOOPBACK}:${port}/healthcheck`))) {
        if (p.exited) throw new Error(`startProcess: ${name} ${p.exitInfo ?? 'exited'}`);
        if (Date.now() > deadline) throw new Error(`startProcess: ${name} did not answer within 30 s`);
        await sleep(100);
      }
      addLog('harness', `started ${name} again`);
    };
    const stopProcess = async (name: string): Promise<void> => {
      const p = processNamed(name);
      const pid = p.child.pid;
      if (!pid) return;
      addLog('harness', `stopping ${name}`);
      p.stopped = true;
      tryKillGroup(pid, 'SIGTERM');
      const deadline = Date.now() + 5_000;
      while (Date.now() < deadline && groupAlive(pid)) await sleep(50);
      if (groupAlive(pid)) tryKillGroup(pid, 'SIGKILL');
      await within(p.exitPromise, 2_000);
    };
    /** The cluster as one proxy's clients see it (the first proxy's, or one `addProxy` started). */
    const view = (proxy: {
      url: string;
      pipeline: ProxyPipeline;
      proxyPipeline: string[];
      resellerPrefix: string;
      ports: SwiftCluster['ports'];
      startedInMs: number;
      stop: SwiftCluster['stop'];
    }): SwiftCluster => ({
      proxyUrl: proxy.url,
      authUrl: proxy.pipeline === 'tempauth' ? `${proxy.url}/auth/v1.0` : undefined,
      storageUrl: (account: string) =>
        `${proxy.url}/v1/${account.startsWith(proxy.resellerPrefix) ? account : proxy.resellerPrefix + account}`,
      pipeline: proxy.pipeline,
      proxyPipeline: proxy.proxyPipeline,
      rootDir,
      swiftDir,
      devicesDir,
      devices,
      spareDevices,
      tmpfs,
      policies,
      ports: proxy.ports,
      nodes: {
        account: node('account', accountPort),
        container: node('container', containerPort),
        object: node('object', objectPort),
      },
      replicators: replicatorNames,
      installRing,
      nodeSwiftDir,
      runOnce,
      startProcess,
      diskUsage: () => fetchDiskUsage(`http://${LOOPBACK}:${objectPort}`, { timeoutMs: 5_000 }),
      replicationPass,
      waitForReplicationPass,
      stopProcess,
      pauseProcess: (name: string) => signalProcess(name, 'SIGSTOP'),
      resumeProcess: (name: string) => signalProcess(name, 'SIGCONT'),
      startedInMs: proxy.startedInMs,
      logFile,
      logs,
      dumpLogs: (lastLines?: number) => {
        const lines = lastLines ? logLines.slice(-lastLines) : logLines;
        process.stderr.write(
          `\n===== Swift test cluster logs (${rootDir}) =====\n${lines.join('\n')}\n===== end of Swift logs =====\n`,
        );
      },
      pids: () => Object.fromEntries(procs.map((p) => [p.name, p.child.pid])),
      addProxy,
      stop: proxy.stop,
    });

    let added = 0;
    const addProxy = async (proxyOptions: SwiftProxyOptions): Promise<SwiftCluster> => {
      const t1 = Date.now();
      if (finished) throw new Error('addProxy: the cluster is stopped');
      if (proxyOptions.pipeline === 'keystone' && !proxyOptions.keystone)
        throw new Error("addProxy: pipeline 'keystone' needs the keystone options");
      const n = (added += 1) + 1;
      const [port, mcPort] = (await freePorts(2)) as [number, number];
      const name = `proxy-server-${n}`;
      const config = proxyConfig(proxyOptions, {
        port,
        memcachedPort: mcPort,
        swiftDir,
        user,
        logPort,
        logLevel,
        logName: name,
      });
      const confFile = join(swiftDir, `${name}.conf`);
      writeFileSync(confFile, config.text);
      // Its own memcached: nothing one proxy caches (tokens, s3token secrets) reaches another.
      launch(`memcached-${n}`, MEMCACHED, memcachedArgs(mcPort));
      launch(name, SWIFT_PYTHON, [SWIFT_LAUNCHER, swiftDir, 'proxy', confFile]);
      const url = `http://${LOOPBACK}:${port}`;
      try {
        await waitUntilServing(
          [
            { name: `memcached-${n} ${LOOPBACK}:${mcPort}`, probe: () => tcpOpen(mcPort) },
            { name: `${name} ${url}/healthcheck`, probe: () => httpOk(`${url}/healthcheck`) },
          ],
          Date.now() + startTimeoutMs,
        );
        await checkPolicies(url);
      } catch (e) {
        await Promise.all([stopProcess(name), stopProcess(`memcached-${n}`)]);
        throw e;
      }
      const startedInMs = Date.now() - t1;
      addLog('harness', `${name} ready in ${startedInMs} ms at ${url} (pipeline ${config.proxyPipeline.join(' ')})`);
      return view({
        url,
        pipeline: proxyOptions.pipeline,
        proxyPipeline: config.proxyPipeline,
        resellerPrefix: config.resellerPrefix,
        ports: { ...ports, proxy: port, memcached: mcPort },
        startedInMs,
        stop: async () => {
          await Promise.all([stopProcess(name), stopProcess(`memcached-${n}`)]);
          return undefined;
        },
      });
    };

    return view({ url: proxyUrl, pipeline: options.pipeline, proxyPipeline, resellerPrefix, ports, startedInMs, stop });
  } catch (e) {
    const tail = logLines.slice(-150).join('\n');
    await stop().catch(() => undefined);
    const err = e instanceof Error ? e : new Error(String(e));
    err.message += `\n--- last Swift log lines ---\n${tail}`;
    throw err;
  }
}

/** Unmounts (and forgets) the device tmpfs mounts; a lazy unmount if a process still holds one. */
function unmountAll(mounts: string[]): void {
  for (const dir of mounts.splice(0)) {
    try {
      execFileSync('umount', [dir], { stdio: 'pipe' });
    } catch {
      try {
        execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
      } catch {
        // not mounted any more
      }
    }
  }
}

/** memcached for a proxy's `cache` filter: loopback, TCP only, 32 MB, one thread. */
function memcachedArgs(port: number): string[] {
  const args = ['-l', LOOPBACK, '-p', String(port), '-U', '0', '-m', '32', '-t', '1'];
  if (process.getuid?.() === 0) args.push('-u', 'root'); // memcached refuses root without -u
  return args;
}

interface ServingCheck {
  name: string;
  probe: () => Promise<boolean>;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Waits for `promise`, at most `ms`. Unlike a race with sleep(), the timer goes once the promise
 * settles: a pending one would keep the test process up (jest's "did not exit") after stop().
 */
async function within(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

function tryKillGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: already gone
  }
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function httpOk(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

function tcpOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: LOOPBACK, port });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(1_000, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}
