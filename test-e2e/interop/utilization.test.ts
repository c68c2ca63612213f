/**
 * Utilization from a real Swift: a single-node cluster with two storage policies whose proxy
 * validates Cairn tokens (keystonemiddleware + keystoneauth) and logs every request through
 * proxy-logging. Known bytes go into several accounts and both policies; `cairn utilization
 * collect` HEADs every account with a reseller token from the gateway (a deleted user's account
 * included) and `cairn utilization ingest-logs` reads the proxy's access lines. The API's figures
 * must match `swift stat` and the bytes actually sent. The proxy also runs s3api + s3token and logs
 * with the `log_msg_template` docs/utilization.md gives (the default one, then `{account}`), so
 * that S3 transfer is billed to its owner like the Swift API's. A scripted workload of the `swift`
 * CLI, awscli and boto3 is billed class by class as the clients' own bookkeeping says: boto3's
 * hooks, and for the CLIs, which keep none, a recorder between them and the proxy.
 */
import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cairn, freePort } from '../support/processes';
import { ADMIN_AUTH, ADMIN_AUTH_NAME, ADMIN_KEY, startStack, type Stack } from '../support/stack';
import { aws, boto3, ClientHome, type Run, type S3Key } from './s3-clients';
import { startRecordingProxy, type Recorded, type RecordingProxy } from './recording-proxy';
import { SWIFT_PYTHON, startSwiftCluster, swiftCli, type SwiftCluster } from './swift-cluster';

const SERVICE_PW = 'swift-service-password-01';
const METER_PW = 'metering-password-000001';
const PW = 'utilization-password-0001';
const HOUR = 3_600_000;
const REGION = 'us-east-1';
/** docs/utilization.md's template: Swift's default, then the account of every request, S3 included. */
const LOG_MSG_TEMPLATE =
  '{client_ip} {remote_addr} {end_time.datetime} {method} {path} {protocol} {status_int} {referer} {user_agent} {auth_token} {bytes_recvd} {bytes_sent} {client_etag} {transaction_id} {headers} {request_time} {source} {log_info} {start_time} {end_time} {policy_index} {account}';

/** Bytes uploaded: account -> policy -> sizes. */
const UPLOADS: Record<string, Record<'gold' | 'silver', number[]>> = {
  alice: { gold: [1000, 2345], silver: [4096] },
  bob: { gold: [50_000], silver: [] },
  carol: { gold: [], silver: [777, 3] },
};

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

function run(cmd: string, args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {
      env: { PATH: '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', LANG: 'C.UTF-8' },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => resolve({ code, out }));
  });
}

describe('cairn utilization against a real Swift cluster', () => {
  let swift: SwiftCluster;
  let stack: Stack;
  let gwAuth: string;
  let work: string;
  let since: number;
  /** The scripted workload's recorder, closed here too when that test fails half-way. */
  let recorder: RecordingProxy | undefined;
  const env = () => ({
    CAIRN_API_URL: stack.apiUrl,
    CAIRN_API_KEY: `${ADMIN_AUTH_NAME}:${ADMIN_KEY}`,
    CAIRN_UTILIZATION_USER: 'metering',
    CAIRN_UTILIZATION_PASSWORD: METER_PW,
  });
  const apiGet = async (path: string) => {
    const res = await fetch(`${stack.apiUrl}${path}`, { headers: { Authorization: ADMIN_AUTH } });
    expect(res.status).toBe(200);
    return res.json() as Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  const swiftOk = async (user: string, args: string[]) => {
    const res = await swiftCli(
      ['-A', `${gwAuth}/v1.0`, '-U', user, '-K', user === 'metering' ? METER_PW : PW, ...args],
      {},
      { cwd: work },
    );
    if (res.code !== 0) {
      swift.dumpLogs(60);
      throw new Error(`swift ${args.join(' ')} as ${user} failed (${res.code}):\n${res.stdout}\n${res.stderr}`);
    }
    return res.stdout;
  };
  /** `swift stat` of an account, as the metering reseller sees it: "Bytes: 3345" -> { Bytes: '3345' }. */
  const stat = async (account: string) => {
    const out = await swiftOk('metering', ['--os-storage-url', `${swift.proxyUrl}/v1/AUTH_${account}`, 'stat']);
    return Object.fromEntries(
      out
        .split('\n')
        .map((l) => l.split(/:\s+/).map((s) => s.trim()))
        .filter((kv) => kv.length === 2),
    ) as Record<string, string>;
  };

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'cairn-utilization-'));
    const gwPort = await freePort();
    gwAuth = `http://127.0.0.1:${gwPort}/auth`;
    swift = await startSwiftCluster({
      pipeline: 'keystone',
      keystone: {
        authUrl: `${gwAuth}/v3`,
        username: 'swift-service',
        password: SERVICE_PW,
        projectName: 'swift-service',
        tokenCacheTime: 1,
        // Parts of any size, so that a multipart upload of three small parts is a real one.
        s3: { location: REGION, s3apiExtra: { min_segment_size: '1' } },
      },
      // SLO (s3api's multipart uploads need it too) and account quotas; Swift adds copy and dlo itself.
      proxyPipeline: [
        'catch_errors',
        'gatekeeper',
        'healthcheck',
        'proxy-logging',
        'cache',
        'authtoken',
        's3api',
        's3token',
        'keystoneauth',
        'account_quotas',
        'slo',
        'proxy-logging',
        'proxy-server',
      ],
      extraProxyConfig:
        '[filter:slo]\nuse = egg:swift#slo\n\n[filter:account_quotas]\nuse = egg:swift#account_quotas\n',
      proxyLoggingSettings: { log_msg_template: LOG_MSG_TEMPLATE },
    });
    stack = await startStack({
      database: 'postgres',
      redis: true,
      s3SecretKeys: `interop:${randomBytes(32).toString('base64')}`,
      gateway: { port: gwPort, publicUrl: gwAuth, storageUrl: `${swift.proxyUrl}/v1` },
    });
    const patch = await fetch(`${stack.apiUrl}/api/v1/clusters/1/`, {
      method: 'PATCH',
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
      body: JSON.stringify({ auth_url: gwAuth, storage_url: `${swift.proxyUrl}/v1` }),
    });
    expect(patch.status).toBeLessThan(300);
    // The policies' names and indexes, as `cairn capacity collect` would report them.
    const put = await fetch(`${stack.apiUrl}/api/v1/clusters/1/devices/`, {
      method: 'PUT',
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        policies: [
          { index: 0, name: 'gold', default: true },
          { index: 1, name: 'silver' },
        ],
        devices: [],
      }),
    });
    expect(put.status).toBe(204);
    await stack.createUser('swift-service', SERVICE_PW, { is_superuser: true });
    await stack.createUser('metering', METER_PW, { is_superuser: true });
    const users: Record<string, { id: string }> = {};
    for (const name of Object.keys(UPLOADS)) users[name] = await stack.createUser(name, PW);
    await stack.createUser('idle', PW);

    since = Date.now();
    // Each `swift` run is mostly Python starting: the users upload at once, each container's files
    // in one run (still one object PUT per file).
    await Promise.all(
      Object.entries(UPLOADS).map(async ([user, byPolicy]) => {
        for (const [policy, sizes] of Object.entries(byPolicy)) {
          if (sizes.length === 0) continue;
          const container = `c-${policy}`;
          await swiftOk(user, ['post', '-H', `X-Storage-Policy: ${policy}`, container]);
          const files = sizes.map((size, i) => {
            const file = `${user}-${policy}-${i}.bin`;
            writeFileSync(join(work, file), Buffer.alloc(size, i + 1));
            return file;
          });
          await swiftOk(user, ['upload', container, ...files]);
        }
      }),
    );
    // Alice reads her first gold object back once: bytes out.
    await swiftOk('alice', ['download', 'c-gold', 'alice-gold-0.bin', '-o', '-']);
    // Carol leaves; her objects stay in Swift and still cost.
    expect(await stack.deleteUser(users.carol!.id)).toBe(204);
    const updater = await run(SWIFT_PYTHON, [
      join(__dirname, 'swift-container-updater.py'),
      swift.swiftDir,
      swift.devicesDir,
    ]);
    if (updater.code !== 0) throw new Error(`container updater failed:\n${updater.out}`);
  });

  afterAll(async () => {
    await recorder?.close();
    await stack?.close();
    await swift?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("when the storage collector runs, then every account's bytes per policy match swift stat, the deleted user's included", async () => {
    const collected = await cairn(['utilization', 'collect', '--cluster', 'default'], env());
    expect(collected.out).toMatch(/cluster 1: 6 of 6 account\(s\) sampled, 0 failed/);
    expect(collected.code).toBe(0);
    const start = new Date(Math.floor(since / HOUR) * HOUR).toISOString();
    const summary = await apiGet(`/api/v1/clusters/1/utilization/summary/?start=${start}&limit=0`);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const byAccount = new Map<string, any>(summary.objects.map((o: { account: string }) => [o.account, o]));
    const stats = await Promise.all(Object.keys(UPLOADS).map((user) => stat(user)));
    for (const [n, [user, byPolicy]] of Object.entries(UPLOADS).entries()) {
      const s = stats[n]!;
      const row = byAccount.get(`AUTH_${user}`);
      expect({ user, bytes: row.bytes_used_peak, objects: row.object_count }).toEqual({
        user,
        bytes: Number(s.Bytes),
        objects: Number(s.Objects),
      });
      expect(Number(s.Bytes)).toBe(sum(byPolicy.gold) + sum(byPolicy.silver));
      for (const [index, policy] of [
        [0, 'gold'],
        [1, 'silver'],
      ] as const) {
        const p = row.policies.find((x: { policy_index: number }) => x.policy_index === index);
        const inSwift = Number(s[`Bytes in policy "${policy}"`] ?? 0);
        expect({ user, policy, bytes: p?.bytes_used_peak ?? 0 }).toEqual({ user, policy, bytes: inSwift });
        expect(inSwift).toBe(sum(byPolicy[policy]));
      }
      expect(row.storage_pct_complete).toBeGreaterThan(0);
    }
    // An account never written to answers 404 in Swift: known, sampled, zero.
    expect(byAccount.get('AUTH_idle')).toMatchObject({ bytes_used_peak: 0, object_count: 0 });
  });

  it('when the access log is ingested, then bytes in and out per account and policy match what was sent, once', async () => {
    // What rsyslog would write to the proxy's access log file: the proxy-server lines, prefix and all.
    const lines = swift
      .logs()
      .split('\n')
      .filter((l) => l.includes(' proxy-server: '))
      .map((l) => l.slice(l.indexOf('proxy-server: ')));
    const logFile = join(work, 'proxy-access.log');
    writeFileSync(logFile, `${lines.join('\n')}\nthis line is not from swift\n`);
    const first = await cairn(['utilization', 'ingest-logs', '--cluster', '1', '--batch-lines', '7', logFile], env());
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/\d+ request\(s\) counted/);
    expect(first.out).toMatch(/[1-9]\d* malformed/);
    expect(first.out).toContain('malformed line');
    expect(first.out).toMatch(/0 already recorded/);

    const start = new Date(Math.floor(since / HOUR) * HOUR).toISOString();
    const detail = async (account: string, policy: number | 'total') => {
      const d = await apiGet(
        `/api/v1/clusters/1/utilization/transfer/${policy}/AUTH_${account}/detail/?start=${start}&limit=0`,
      );
      return (d.objects as Array<{ bytes_in: number; bytes_out: number; req_count: number }>).reduce(
        (t, r) => ({
          bytes_in: t.bytes_in + r.bytes_in,
          bytes_out: t.bytes_out + r.bytes_out,
          req_count: t.req_count + r.req_count,
        }),
        { bytes_in: 0, bytes_out: 0, req_count: 0 },
      );
    };
    const check = async () => {
      for (const [user, byPolicy] of Object.entries(UPLOADS)) {
        for (const [index, policy] of [
          [0, 'gold'],
          [1, 'silver'],
        ] as const) {
          const got = await detail(user, index);
          // Object PUTs carry the policy; the bytes in are exactly the files' sizes.
          expect({ user, policy, bytes_in: got.bytes_in }).toEqual({ user, policy, bytes_in: sum(byPolicy[policy]) });
          expect(got.req_count).toBeGreaterThanOrEqual(byPolicy[policy].length);
        }
      }
      // The one download, plus the short bodies of the object PUTs' "201 Created" answers.
      const out = (await detail('alice', 0)).bytes_out;
      expect(out).toBeGreaterThanOrEqual(UPLOADS.alice!.gold[0]!);
      expect(out).toBeLessThan(UPLOADS.alice!.gold[0]! + 100 * UPLOADS.alice!.gold.length);
      const total = await detail('carol', 'total');
      expect(total.bytes_in).toBe(780);
    };
    await check();
    // The same file again: every batch is recognised, nothing counts twice.
    const again = await cairn(['utilization', 'ingest-logs', '--cluster', '1', '--batch-lines', '7', logFile], env());
    expect(again.code).toBe(0);
    const batches = /(\d+) batch\(es\) sent, (\d+) already recorded/.exec(again.out)!;
    expect(batches[1]).toBe(batches[2]);
    await check();
  });

  it("when the collector reaches the cluster by other addresses than the cluster's record, then CAIRN_UTILIZATION_AUTH_URL and _STORAGE_URL take it there", async () => {
    const setUrls = async (urls: { auth_url: string; storage_url: string }) => {
      const res = await fetch(`${stack.apiUrl}/api/v1/clusters/1/`, {
        method: 'PATCH',
        headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
        body: JSON.stringify(urls),
      });
      expect(res.status).toBeLessThan(300);
    };
    // What a deployment records: addresses for clients elsewhere, which the collector's network cannot reach.
    await setUrls({ auth_url: 'http://127.0.0.1:9/auth', storage_url: 'http://127.0.0.1:9/v1' });
    try {
      const onRecord = await cairn(['utilization', 'collect', '--cluster', 'default'], {
        ...env(),
        CAIRN_UTILIZATION_TIMEOUT_MS: '2000',
      });
      expect(onRecord.code).not.toBe(0);
      expect(onRecord.out).toContain('http://127.0.0.1:9/auth/v1.0');
      const overridden = await cairn(['utilization', 'collect', '--cluster', 'default'], {
        ...env(),
        CAIRN_UTILIZATION_AUTH_URL: gwAuth,
        CAIRN_UTILIZATION_STORAGE_URL: `${swift.proxyUrl}/v1`,
      });
      expect(overridden.out).toMatch(/cluster 1: 6 of 6 account\(s\) sampled, 0 failed/);
      expect(overridden.code).toBe(0);
    } finally {
      await setUrls({ auth_url: gwAuth, storage_url: `${swift.proxyUrl}/v1` });
    }
  });
  it("when a user moves bytes through S3 (awscli and boto3) and the Swift API, then ingest-logs bills them all to the owner's account, byte for byte; without {account} the S3 lines are reported unattributed", async () => {
    const home = new ClientHome();
    try {
      const dave = await stack.createUser('dave', PW);
      const res = await fetch(`${stack.apiUrl}/api/v1/s3_credentials/`, {
        method: 'POST',
        headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
        body: JSON.stringify({ user: `/api/v1/users/${dave.id}/` }),
      });
      expect(res.status).toBe(201);
      const created = (await res.json()) as { access_key: string; secret: string };
      const key: S3Key = { access: created.access_key, secret: created.secret };
      const ok = (r: Run, what: string): Run => {
        if (r.code !== 0) {
          swift.dumpLogs(60);
          throw new Error(`${what} failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
        }
        return r;
      };
      const first = swift.logs().split('\n').length;
      const sizes = { aws: 70_000, boto3: 12_345, swift: 5_000 };
      const upload = join(home.dir, 'up.bin');
      writeFileSync(upload, randomBytes(sizes.aws));
      ok(await aws(home, swift.proxyUrl, REGION, key, ['s3', 'mb', 's3://dave-bucket']), 'aws s3 mb');
      ok(await aws(home, swift.proxyUrl, REGION, key, ['s3', 'cp', upload, 's3://dave-bucket/up.bin']), 'aws s3 cp up');
      ok(
        await aws(home, swift.proxyUrl, REGION, key, [
          's3',
          'cp',
          's3://dave-bucket/up.bin',
          join(home.dir, 'down.bin'),
        ]),
        'aws s3 cp down',
      );
      expect(readFileSync(join(home.dir, 'down.bin')).equals(readFileSync(upload))).toBe(true);
      const { run, result } = await boto3(
        home,
        swift.proxyUrl,
        REGION,
        key,
        [
          's3.put_object(Bucket="dave-bucket", Key="b.bin", Body=b"x" * args["size"])',
          'got = len(s3.get_object(Bucket="dave-bucket", Key="b.bin")["Body"].read())',
          'print(json.dumps({"got": got}))',
        ].join('\n'),
        { size: sizes.boto3 },
      );
      expect({ result, stderr: run.code === 0 ? '' : run.stderr }).toEqual({
        result: { got: sizes.boto3 },
        stderr: '',
      });
      // The same account through the Swift API, in the same log.
      writeFileSync(join(work, 'dave.bin'), Buffer.alloc(sizes.swift, 7));
      await swiftOk('dave', ['upload', 'dave-bucket', 'dave.bin']);

      const lines = swift
        .logs()
        .split('\n')
        .slice(first)
        .filter((l) => l.includes(' proxy-server: '))
        .map((l) => l.slice(l.indexOf('proxy-server: ')));
      // S3 requests are logged with their S3 path, and the account in the last field.
      const s3Lines = lines.filter((l) => / (PUT|GET) \/dave-bucket\/(up|b)\.bin /.test(l));
      expect(s3Lines).toHaveLength(4);
      for (const l of s3Lines) expect(l).toMatch(/ AUTH_dave$/);

      // In Swift's default template (the same lines without {account}) S3 requests name no account.
      const defaultFormat = join(work, 'proxy-access-default.log');
      writeFileSync(
        defaultFormat,
        `${lines
          .filter((l) => !/ \/v1\//.test(l))
          .map((l) => l.replace(/ \S+$/, ''))
          .join('\n')}\n`,
      );
      const unattributed = await cairn(['utilization', 'ingest-logs', '--cluster', '1', defaultFormat], env());
      expect(unattributed.code).toBe(0);
      expect(unattributed.out).toMatch(
        /, 0 request\(s\) counted, (\d+) unattributed \(\1 with no account, 0 to accounts no user had\)/,
      );
      expect(unattributed.out).toContain('request with no account, not billed');

      const logFile = join(work, 'proxy-access-s3.log');
      writeFileSync(logFile, `${lines.join('\n')}\n`);
      const ingested = await cairn(['utilization', 'ingest-logs', '--cluster', '1', logFile], env());
      expect(ingested.code).toBe(0);
      expect(ingested.out).toMatch(/, 0 unattributed/);
      const start = new Date(Math.floor(since / HOUR) * HOUR).toISOString();
      const d = await apiGet(`/api/v1/clusters/1/utilization/transfer/total/AUTH_dave/detail/?start=${start}&limit=0`);
      const total = (d.objects as Array<{ bytes_in: number; bytes_out: number; req_count: number }>).reduce(
        (t, r) => ({
          bytes_in: t.bytes_in + r.bytes_in,
          bytes_out: t.bytes_out + r.bytes_out,
          req_count: t.req_count + r.req_count,
        }),
        { bytes_in: 0, bytes_out: 0, req_count: 0 },
      );
      // Every byte uploaded, through S3 and the Swift API; every byte downloaded, plus S3's short XML answers.
      expect(total.bytes_in).toBe(sizes.aws + sizes.boto3 + sizes.swift);
      expect(total.bytes_out).toBeGreaterThanOrEqual(sizes.aws + sizes.boto3);
      expect(total.bytes_out).toBeLessThan(sizes.aws + sizes.boto3 + 4096);
      // One request per line of dave's (no middleware subrequest: their `source` field is '-').
      expect(total.req_count).toBe(lines.filter((l) => l.endsWith(' AUTH_dave') && l.split(' ').at(-6) === '-').length);
    } finally {
      home.close();
    }
  });

  it("when a scripted workload goes through the Swift API and S3, then every class, error and byte per API is what the workload did, and storage what Swift's HEAD says", async () => {
    const CLASSES = ['get', 'head', 'put', 'post', 'delete', 'list', 'copy', 'other'] as const;
    type Cls = (typeof CLASSES)[number];
    const book = {
      swift: { in: 0, out: 0, requests: 0 },
      s3: { in: 0, out: 0, requests: 0 },
      classes: Object.fromEntries(CLASSES.map((c) => [c, 0])) as Record<Cls, number>,
      errors: 0,
    };
    const count = (api: 'swift' | 's3', cls: Cls, status: number, bytesIn: number, bytesOut: number) => {
      book[api].in += bytesIn;
      book[api].out += bytesOut;
      book[api].requests++;
      book.classes[cls]++;
      if (status >= 400) book.errors++;
    };
    /**
     * A request's API and class from the wire, by the definitions docs/utilization.md gives: a GET of
     * an account, container or bucket is a listing; a PUT that copies is a copy.
     */
    const classOf = (r: Recorded): ['swift' | 's3', Cls] => {
      const segments = r.url.split('?')[0]!.split('/').filter(Boolean);
      const api = segments[0] === 'v1' ? 'swift' : 's3';
      const object = segments.length >= (api === 'swift' ? 4 : 2);
      const copies = r.headers['x-copy-from'] !== undefined || r.headers['x-amz-copy-source'] !== undefined;
      const cls: Record<string, Cls> = {
        GET: object ? 'get' : 'list',
        HEAD: 'head',
        PUT: copies ? 'copy' : 'put',
        POST: 'post',
        DELETE: 'delete',
        COPY: 'copy',
      };
      return [api, cls[r.method] ?? 'other'];
    };
    const erin = await stack.createUser('erin', PW);
    const first = swift.logs().split('\n').length;
    const login = async (user: string, pw: string) =>
      (await fetch(`${gwAuth}/v1.0`, { headers: { 'X-Auth-User': user, 'X-Auth-Key': pw } })).headers.get(
        'x-auth-token',
      )!;
    const token = await login('erin', PW);
    const base = `${swift.proxyUrl}/v1/AUTH_erin`;
    // The clients that keep no account of their own requests (the swift CLI, awscli) go through a
    // recorder (`wire`): what each request sent and got, booked at the end by classOf.
    const wire = await startRecordingProxy(swift.proxyUrl);
    recorder = wire;
    // Under the suite's work directory, which afterAll removes whether or not this test passes.
    const files = mkdtempSync(join(work, 'workload-'));
    const file = (name: string, size: number, fill: number) => {
      writeFileSync(join(files, name), Buffer.alloc(size, fill));
      return name;
    };
    const erinCli = async (args: string[], expectCode = 0) => {
      const r = await swiftCli(
        ['-A', `${gwAuth}/v1.0`, '-U', 'erin', '-K', PW, '--os-storage-url', `${wire.url}/v1/AUTH_erin`, ...args],
        {},
        { cwd: files },
      );
      expect({ args, code: r.code, stderr: expectCode === 0 ? r.stderr : '' }).toEqual({
        args,
        code: expectCode,
        stderr: '',
      });
      return r.stdout;
    };

    // Swift API with the swift CLI: two uploads, an SLO of three segments and its manifest, its
    // download, listings, a COPY, a HEAD, deletes (one of something missing), an 8 MiB upload.
    await erinCli(['upload', 'w', file('a', 1000, 1), file('b', 2500, 2)]);
    await erinCli(['upload', '--use-slo', '--segment-size', '2000', 'w', file('slo', 6000, 3)]);
    expect((await erinCli(['download', 'w', 'slo', '-o', '-'])).length).toBe(6000);
    expect((await erinCli(['list', 'w'])).split('\n')).toEqual(['a', 'b', 'slo', '']);
    await erinCli(['list']);
    await erinCli(['copy', 'w', 'a', '--destination', '/w/a-copy']);
    await erinCli(['stat', 'w', 'a-copy']);
    await erinCli(['delete', 'w', 'b']);
    await erinCli(['delete', 'w', 'nothing'], 1);
    await erinCli(['upload', 'w', file('large', 8 << 20, 9)]);
    // The CLI has no PUT with X-Copy-From (its copy is a COPY): that one by hand, through the recorder.
    const copied = await fetch(`${wire.url}/v1/AUTH_erin/w/b-copy`, {
      method: 'PUT',
      headers: { 'X-Auth-Token': token, 'X-Copy-From': 'w/a' },
    });
    expect(copied.status).toBe(201);
    await copied.arrayBuffer();
    // A download the client cuts off after its first chunk: the proxy logs 499 with what it sent.
    const received = await new Promise<number>((resolve, reject) => {
      const url = new URL(`${base}/w/large`);
      const r = httpRequest(url, { headers: { 'X-Auth-Token': token } }, (res) => {
        res.once('data', (chunk: Buffer) => {
          res.destroy();
          r.destroy();
          resolve(chunk.length);
        });
      });
      r.on('error', (e) => (e.message.includes('aborted') ? undefined : reject(e)));
      r.end();
    });
    book.classes.get++;
    book.errors++;
    book.swift.requests++;

    // S3 (boto3): a bucket, an upload, a multipart upload of three parts, GETs (one ranged, one of
    // nothing), a listing, a copy, a HEAD, deletes; what each request sent and got, as the client saw it.
    const created = (await (
      await fetch(`${stack.apiUrl}/api/v1/s3_credentials/`, {
        method: 'POST',
        headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
        body: JSON.stringify({ user: `/api/v1/users/${erin.id}/` }),
      })
    ).json()) as { access_key: string; secret: string };
    const home = new ClientHome();
    let calls: Array<[string, number, number, number]>;
    try {
      const { run, result } = await boto3(
        home,
        swift.proxyUrl,
        REGION,
        { access: created.access_key, secret: created.secret },
        [
          'calls = []',
          'sent = {}',
          'def body_len(request, **kw):',
          '    b = request.body',
          '    sent["n"] = len(b) if isinstance(b, (bytes, bytearray)) else len(b.encode()) if isinstance(b, str) else (len(b.read()) if hasattr(b, "read") and not b.seek(0) else 0)',
          '    if hasattr(b, "seek"): b.seek(0)',
          'def after(http_response, model, **kw):',
          // A streamed body (GetObject's) is read later: its Content-Length; any other body, errors
          // included, as received (CompleteMultipartUpload's has no length: s3api streams it,
          // keep-alive blanks first).
          '    streamed = model.has_streaming_output and http_response.status_code < 300',
          '    n = 0 if model.name == "HeadObject" else int(http_response.headers["content-length"]) if streamed else len(http_response.content)',
          '    calls.append([model.name, http_response.status_code, sent.pop("n", 0), n])',
          's3.meta.events.register("before-send.s3", body_len)',
          's3.meta.events.register("after-call.s3", after)',
          'B = "erin-bucket"',
          's3.create_bucket(Bucket=B)',
          's3.put_object(Bucket=B, Key="k1", Body=b"k" * 4000)',
          'up = s3.create_multipart_upload(Bucket=B, Key="mp")["UploadId"]',
          'parts = [{"PartNumber": i + 1, "ETag": s3.upload_part(Bucket=B, Key="mp", UploadId=up, PartNumber=i + 1, Body=bytes([i]) * n)["ETag"]} for i, n in enumerate([1000, 2000, 3000])]',
          's3.complete_multipart_upload(Bucket=B, Key="mp", UploadId=up, MultipartUpload={"Parts": parts})',
          'whole = len(s3.get_object(Bucket=B, Key="mp")["Body"].read())',
          'ranged = len(s3.get_object(Bucket=B, Key="k1", Range="bytes=0-99")["Body"].read())',
          'missing = error_code(lambda: s3.get_object(Bucket=B, Key="nothing"))',
          's3.list_objects_v2(Bucket=B)',
          's3.copy_object(Bucket=B, Key="k1-copy", CopySource={"Bucket": B, "Key": "k1"})',
          's3.head_object(Bucket=B, Key="mp")',
          's3.delete_object(Bucket=B, Key="k1")',
          's3.delete_object(Bucket=B, Key="k1-copy")',
          'print(json.dumps({"whole": whole, "ranged": ranged, "missing": missing, "calls": calls}))',
        ].join('\n'),
      );
      expect({ result: result === undefined ? undefined : 'ok', stderr: run.code === 0 ? '' : run.stderr }).toEqual({
        result: 'ok',
        stderr: '',
      });
      const r = result as { whole: number; ranged: number; missing: string; calls: typeof calls };
      expect([r.whole, r.ranged, r.missing]).toEqual([6000, 100, 'NoSuchKey']);
      calls = r.calls;
    } finally {
      home.close();
    }
    // awscli (`aws s3`): an upload in three parts, a download in ranged GETs, a listing, a delete.
    {
      const home = new ClientHome();
      try {
        const key = { access: created.access_key, secret: created.secret };
        // 5 MiB is the smallest part awscli makes: two whole parts and a third of 1,000 bytes.
        const parts = { multipart_threshold: '5MB', multipart_chunksize: '5MB' };
        const big = join(files, file('big', (10 << 20) + 1000, 5));
        const s3 = (args: string[]) => aws(home, wire.url, REGION, key, args, parts);
        for (const args of [
          ['s3', 'cp', big, 's3://erin-bucket/big'],
          ['s3', 'cp', 's3://erin-bucket/big', join(files, 'big-back')],
          ['s3', 'ls', 's3://erin-bucket'],
          ['s3', 'rm', 's3://erin-bucket/big'],
        ])
          expect(await s3(args)).toMatchObject({ code: 0, stderr: '' });
        expect(readFileSync(join(files, 'big-back')).equals(readFileSync(big))).toBe(true);
      } finally {
        home.close();
      }
    }
    const S3_CLASS: Record<string, Cls> = {
      CreateBucket: 'put',
      PutObject: 'put',
      CreateMultipartUpload: 'post',
      UploadPart: 'put',
      CompleteMultipartUpload: 'post',
      GetObject: 'get',
      ListObjectsV2: 'list',
      CopyObject: 'copy',
      HeadObject: 'head',
      DeleteObject: 'delete',
    };
    expect(calls.map(([op]) => op).filter((op) => !S3_CLASS[op])).toEqual([]);
    for (const [op, status, sentBytes, gotBytes] of calls) count('s3', S3_CLASS[op]!, status, sentBytes, gotBytes);

    await wire.close();
    const uploads = wire.recorded.filter((r) => r.method === 'PUT' && r.url.includes('partNumber='));
    expect(uploads.map((r) => r.sent).sort((a, b) => a - b)).toEqual([1000, 5 << 20, 5 << 20]);
    expect(wire.recorded.filter((r) => r.method === 'GET' && r.headers.range).length).toBe(3);
    for (const r of wire.recorded) {
      const [api, cls] = classOf(r);
      count(api, cls, r.status, r.sent, r.got);
    }

    // Last, an upload over the account's quota (set by the reseller: a POST of erin's account too).
    const reseller = await login('metering', METER_PW);
    const quota = await fetch(base, {
      method: 'POST',
      headers: { 'X-Auth-Token': reseller, 'X-Account-Meta-Quota-Bytes': '1' },
    });
    count('swift', 'post', quota.status, 0, (await quota.arrayBuffer()).byteLength);
    expect(quota.status).toBe(204);
    const refused = await fetch(`${base}/w/over`, {
      method: 'PUT',
      headers: { 'X-Auth-Token': token },
      body: Buffer.alloc(20_000, 4),
    });
    // account_quotas refuses it on its Content-Length, before reading it: none of its bytes are received.
    count('swift', 'put', refused.status, 0, (await refused.arrayBuffer()).byteLength);
    expect(refused.status).toBe(413);

    // Lines arrive over UDP once each response has ended: wait for the refused upload's and the cut download's.
    const workload = () =>
      swift
        .logs()
        .split('\n')
        .slice(first)
        .filter((l) => l.includes(' proxy-server: '))
        .map((l) => l.slice(l.indexOf('proxy-server: ')));
    for (
      let i = 0;
      i < 100 && !(workload().some((l) => / 413 /.test(l)) && workload().some((l) => / 499 /.test(l)));
      i++
    )
      await new Promise((r) => setTimeout(r, 100));
    const lines = workload();
    const logFile = join(work, 'proxy-access-workload.log');
    writeFileSync(logFile, `${lines.join('\n')}\n`);
    const ingested = await cairn(['utilization', 'ingest-logs', '--cluster', '1', logFile], env());
    expect(ingested.code).toBe(0);
    // The proxy's other messages (warnings, a disconnect) share its log name: malformed, not requests.
    expect(ingested.out).toMatch(/, 0 unattributed .*, 0 with an unknown method/);
    const start = new Date(Math.floor(since / HOUR) * HOUR).toISOString();
    const d = await apiGet(`/api/v1/clusters/1/utilization/transfer/total/AUTH_erin/detail/?start=${start}&limit=0`);
    const got = (d.objects as Array<Record<string, number>>).reduce<Record<string, number>>((t, r) => {
      for (const [k, v] of Object.entries(r)) if (typeof v === 'number' && k !== 'pct_complete') t[k] = (t[k] ?? 0) + v;
      return t;
    }, {});
    // The cut-off download sent at least what the client got and at most the object.
    const cutOut = got.bytes_out! - book.swift.out - book.s3.out;
    expect(cutOut).toBeGreaterThanOrEqual(received);
    expect(cutOut).toBeLessThanOrEqual(8 << 20);
    expect(got).toEqual({
      bytes_in: book.swift.in + book.s3.in,
      bytes_out: book.swift.out + book.s3.out + cutOut,
      req_count: book.swift.requests + book.s3.requests,
      ...Object.fromEntries(CLASSES.map((c) => [`req_${c}`, book.classes[c]])),
      req_errors: book.errors,
      s3_bytes_in: book.s3.in,
      s3_bytes_out: book.s3.out,
      s3_req_count: book.s3.requests,
      internal_bytes_in: 0,
      internal_bytes_out: 0,
      internal_req_count: 0,
    });

    // Storage, from the same run: what the collector records is what Swift's own HEAD says.
    const updater = await run(SWIFT_PYTHON, [
      join(__dirname, 'swift-container-updater.py'),
      swift.swiftDir,
      swift.devicesDir,
    ]);
    if (updater.code !== 0) throw new Error(`container updater failed:\n${updater.out}`);
    const collected = await cairn(['utilization', 'collect', '--cluster', 'default'], env());
    expect(collected.code).toBe(0);
    const s = await stat('erin');
    const summary = await apiGet(`/api/v1/clusters/1/utilization/summary/?start=${start}&account=AUTH_erin`);
    expect(summary.objects[0]).toMatchObject({ bytes_used_peak: Number(s.Bytes), object_count: Number(s.Objects) });
    // w: a, a-copy, b-copy, the SLO manifest, large, and its three segments in w_segments;
    // erin-bucket: mp (k1, its copy and big deleted) and its three parts in erin-bucket+segments.
    expect(Number(s.Objects)).toBe(8 + 1 + 3);
  });
});
