import { randomBytes } from 'node:crypto';
import { createEc2, signedBody } from '../s3/s3-client';

/**
 * Rows of every kind this release's schema holds, written through this release's own API and
 * gateway (as its replicas write them during a rolling upgrade), for the previous release to read
 * back (previous-release.test.ts). What each write answered is kept, to check the reads against.
 */

export interface Answer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  headers: Headers;
}

/** One request; the body is JSON both ways (an empty answer: undefined). */
export async function call(
  base: string,
  method: string,
  path: string,
  opts: { auth?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      Accept: 'application/json',
      ...(opts.auth ? { Authorization: opts.auth } : {}),
      ...(opts.body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...opts.headers,
    },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON: kept as text, for the failure message.
  }
  return { status: res.status, body, headers: res.headers };
}

/** `call`, expecting `status`; a failure shows the answer. */
export async function expectCall(
  status: number,
  base: string,
  method: string,
  path: string,
  opts: Parameters<typeof call>[3] = {},
): Promise<Answer> {
  const res = await call(base, method, path, opts);
  if (res.status !== status)
    throw new Error(`${method} ${path}: expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res;
}

/** Polls `check` until it holds, or fails after `ms` saying what was awaited. */
export async function until(what: string, check: () => Promise<boolean> | boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not so within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const passwordLogin = (name: string, password: string) => ({
  auth: {
    identity: { methods: ['password'], password: { user: { name, domain: { id: 'default' }, password } } },
    scope: { project: { name, domain: { id: 'default' } } },
  },
});

export const appCredLogin = (id: string, secret: string) => ({
  auth: { identity: { methods: ['application_credential'], application_credential: { id, secret } } },
});

/** A V3 token of `name` from the gateway at `gateway`. */
export async function v3Token(gateway: string, name: string, password: string): Promise<string> {
  const res = await expectCall(201, gateway, 'POST', '/auth/v3/auth/tokens', { body: passwordLogin(name, password) });
  return res.headers.get('x-subject-token')!;
}

export const TIB = 2 ** 40;
/** Above 2^53: the API writes it as a decimal string. */
export const HUGE = '9223372036854775807';
export const ABOVE_2_53 = '9007199254740993';

export interface StoredUser {
  id: string;
  name: string;
  password: string;
}

export interface S3Key {
  access: string;
  secret: string;
  /** ms since the epoch, or null: never. */
  expiresAt: number | null;
}

export interface AppCred {
  id: string;
  secret: string;
  expiresAt: number | null;
}

/** What `writeRows` wrote, with the secrets only its answers showed. */
export interface Written {
  users: {
    plain: StoredUser;
    service: StoredUser;
    quota: StoredUser;
    defaulted: StoredUser;
    disabled: StoredUser;
    apps: StoredUser;
  };
  s3: { ordinary: S3Key; expiring: S3Key; expired: S3Key; bound: S3Key };
  appCreds: { reader: AppCred; automation: AppCred; expired: AppCred };
  readerOperator: { id: string; auth: string };
  /** The console session's cookie (name=value). */
  sessionCookie: string;
  /** A token this release's gateway issued to `quota`, still live. */
  quotaToken: string;
  /** The hour the utilization samples were written for (ISO). */
  hour: string;
  /** The later of the short-lived key's and credential's `expires_at`: reads check it has passed. */
  shortExpiry: number;
}

const SHORT_LIFE_MS = 5_000;

/**
 * Writes, through this release's API (`api`, `auth` its admin) and gateway (`gateway`), on a
 * cluster whose Swift is `swift`: the cluster's addresses and default quotas, a device report, users
 * with and without quotas (per user and per policy, some from the defaults; one disabled, one
 * superuser), S3 keys (never expiring, expiring later, already expired, bound to an application
 * credential), application credentials (restricted with access rules and an expiry, unrestricted,
 * expired), a reader operator with its key, storage and transfer utilization, a console session,
 * and a token. Each write leaves its audit record. `waitApplied` waits for the quota reconciler
 * (in another replica) to apply the quotas.
 */
export async function writeRows(
  api: string,
  auth: string,
  gateway: string,
  waitApplied: (userIds: string[]) => Promise<void>,
): Promise<Written> {
  const pw = () => `${randomBytes(18).toString('base64url')}-pw`;
  const makeUser = async (name: string, extra: Record<string, unknown> = {}): Promise<StoredUser> => {
    const password = pw();
    const made = await expectCall(201, api, 'POST', '/api/v1/users/', {
      auth,
      body: { cluster: '/api/v1/clusters/1/', user: name, password, ...extra },
    });
    return { id: String(made.body.id), name, password };
  };

  const plain = await makeUser('plain');
  const service = await makeUser('swift-service', { is_superuser: true });
  await expectCall(202, api, 'PATCH', '/api/v1/clusters/1/', {
    auth,
    body: {
      default_quota_bytes: 5 * TIB,
      default_quota_count: 100_000,
      default_quota_bytes_policy: { gold: TIB },
      default_quota_count_policy: { Silver: 500 },
    },
  });
  const quota = await makeUser('quota', {
    quota_bytes: HUGE,
    quota_count: 123_456,
    quota_bytes_policy: { gold: TIB, Silver: ABOVE_2_53 },
    quota_count_policy: { gold: 1000 },
  });
  const defaulted = await makeUser('defaulted');
  const disabled = await makeUser('disabled');
  await expectCall(202, api, 'PATCH', `/api/v1/users/${disabled.id}/`, { auth, body: { enabled: false } });
  const apps = await makeUser('apps');
  await waitApplied([quota.id, defaulted.id]);

  const s3Key = async (user: StoredUser, expiresAt: number | null): Promise<S3Key> => {
    const made = await expectCall(201, api, 'POST', '/api/v1/s3_credentials/', {
      auth,
      body: {
        user: `/api/v1/users/${user.id}/`,
        ...(expiresAt === null ? {} : { expires_at: new Date(expiresAt).toISOString() }),
      },
    });
    return { access: made.body.access_key, secret: made.body.secret, expiresAt };
  };
  // Short lives, each counted from its own write (a busy machine may take seconds between them).
  let shortExpiry = 0;
  const soon = () => (shortExpiry = Date.now() + SHORT_LIFE_MS);
  const ordinary = await s3Key(quota, null);
  const expiring = await s3Key(quota, Date.now() + 3_600_000);
  const expired = await s3Key(defaulted, soon());

  const appsToken = await v3Token(gateway, apps.name, apps.password);
  const appCred = async (credential: Record<string, unknown>): Promise<AppCred> => {
    const made = await expectCall(201, gateway, 'POST', `/auth/v3/users/${apps.name}/application_credentials`, {
      headers: { 'X-Auth-Token': appsToken },
      body: { application_credential: credential },
    });
    const c = made.body.application_credential;
    return { id: c.id, secret: c.secret, expiresAt: c.expires_at === null ? null : Date.parse(c.expires_at) };
  };
  const reader = await appCred({
    name: 'public-reader',
    description: 'reads the public container',
    access_rules: [{ service: 'object-store', method: 'GET', path: `/v1/AUTH_${apps.name}/public/**` }],
    expires_at: new Date(Date.now() + 3_600_000).toISOString(),
  });
  const automation = await appCred({ name: 'automation', unrestricted: true });
  const expiredCred = await appCred({ name: 'short', expires_at: new Date(soon()).toISOString() });
  // An EC2 key made with the unrestricted credential's token is bound to it.
  const automationToken = (
    await expectCall(201, gateway, 'POST', '/auth/v3/auth/tokens', {
      body: appCredLogin(automation.id, automation.secret),
    })
  ).headers.get('x-subject-token')!;
  const ec2 = await createEc2(gateway, automationToken, apps.name);
  const bound: S3Key = { access: ec2.access, secret: ec2.secret, expiresAt: null };
  // Each key signs here, with this release, before the previous one is asked.
  for (const key of [ordinary, expiring, bound])
    await expectCall(200, gateway, 'POST', '/auth/v3/s3tokens', { body: signedBody(key.access, key.secret) });

  const op = await expectCall(201, api, 'POST', '/api/v1/operators/', {
    auth,
    body: { name: 'monitoring', role: 'reader', clusters: ['/api/v1/clusters/1/'] },
  });

  const hourMs = Math.floor(Date.now() / 3_600_000) * 3_600_000;
  const hour = new Date(hourMs).toISOString();
  await expectCall(200, api, 'POST', '/api/v1/clusters/1/utilization/storage/', {
    auth,
    body: {
      interval: 3600,
      sampled_at: new Date().toISOString(),
      samples: [
        {
          account: `AUTH_${quota.name}`,
          bytes_used: 3 * TIB,
          object_count: 42,
          container_count: 2,
          policies: [
            { index: 0, bytes_used: TIB, object_count: 40, container_count: 1 },
            { index: 1, bytes_used: 2 * TIB, object_count: 2, container_count: 1 },
          ],
        },
        { account: `AUTH_${defaulted.name}`, bytes_used: 10, object_count: 1, container_count: 1, policies: [] },
      ],
    },
  });
  await expectCall(200, api, 'POST', '/api/v1/clusters/1/utilization/transfer/', {
    auth,
    body: {
      batch_id: randomBytes(24).toString('hex'),
      covered: { start: hour, end: new Date().toISOString() },
      records: [
        { account: `AUTH_${quota.name}`, policy_index: 0, hour, bytes_in: 1000, bytes_out: 10, req_count: 2 },
        { account: `AUTH_${quota.name}`, policy_index: 1, hour, bytes_in: 5, bytes_out: 7, req_count: 1 },
      ],
    },
  });

  const session = await expectCall(201, api, 'POST', '/api/v1/session/', { auth });
  const sessionCookie = session.headers.get('set-cookie')!.split(';')[0]!;
  const quotaToken = await v3Token(gateway, quota.name, quota.password);

  return {
    users: { plain, service, quota, defaulted, disabled, apps },
    s3: { ordinary, expiring, expired, bound },
    appCreds: { reader, automation, expired: expiredCred },
    readerOperator: { id: String(op.body.id), auth: `ApiKey monitoring:${op.body.api_key as string}` },
    sessionCookie,
    quotaToken,
    hour,
    shortExpiry,
  };
}

/**
 * The management API's reads, by path, each with the migration that brought what it shows: a
 * previous release without it may not answer that path as this release does (it must still not
 * fail with a 5xx).
 */
export function readPaths(w: Written): Array<{ path: string; needs?: string }> {
  const u = w.users;
  // A closed range: the answers do not move with the clock between the two releases' reads.
  const range = `start=${w.hour}&end=${new Date(Date.parse(w.hour) + 3_600_000).toISOString()}`;
  return [
    { path: '/api/v1/whoami/' },
    { path: '/api/v1/clusters/' },
    { path: '/api/v1/clusters/1/' },
    { path: '/api/v1/clusters/1/capacity/list/' },
    { path: '/api/v1/users/?limit=100' },
    ...Object.values(u).map((user) => ({ path: `/api/v1/users/${user.id}/` })),
    { path: '/api/v1/s3_credentials/?limit=100' },
    { path: '/api/v1/application_credentials/?limit=100', needs: 'application_credentials' },
    { path: `/api/v1/application_credentials/${w.appCreds.reader.id}/`, needs: 'application_credentials' },
    { path: '/api/v1/operators/?limit=100' },
    { path: `/api/v1/operators/${w.readerOperator.id}/` },
    { path: `/api/v1/operators/${w.readerOperator.id}/keys/` },
    { path: '/api/v1/audit/?limit=100' },
    { path: `/api/v1/clusters/1/utilization/storage/0/AUTH_${u.quota.name}/detail/?${range}` },
    { path: `/api/v1/clusters/1/utilization/transfer/0/AUTH_${u.quota.name}/detail/?${range}` },
    { path: `/api/v1/clusters/1/utilization/summary/?${range}`, needs: 'utilization_cluster_rollups' },
    { path: '/api/v1/clusters/1/utilization/accounts/?limit=100' },
  ];
}

/**
 * Whether the previous release's answer tells what this release's does: the same status, and in
 * every object (the answer's, each of a list's, matched by resource_uri, and those nested in them)
 * each field the previous release shows has this release's value. Fields only this release has are
 * left out, as a newer release may add fields. Returns the differences, empty when none.
 */
export function differences(path: string, newer: Answer, previous: Answer): string[] {
  if (previous.status !== newer.status) return [`${path}: ${previous.status} (this release: ${newer.status})`];
  const found: string[] = [];
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  const compare = (where: string, p: unknown, n: unknown): void => {
    if (isObject(p) && isObject(n)) {
      for (const [key, value] of Object.entries(p)) compare(`${where}.${key}`, value, n[key]);
    } else if (Array.isArray(p) && Array.isArray(n) && p.length === n.length) {
      p.forEach((value, i) => compare(`${where}[${i}]`, value, n[i]));
    } else if (JSON.stringify(p) !== JSON.stringify(n)) {
      found.push(`${where}: ${JSON.stringify(p)} (this release: ${JSON.stringify(n)})`);
    }
  };
  const p = previous.body as Record<string, unknown>;
  const n = newer.body as Record<string, unknown>;
  if (Array.isArray(p.objects) && Array.isArray(n.objects)) {
    const meta = (m: unknown) => (m as { total_count?: unknown } | undefined)?.total_count;
    if (meta(p.meta) !== meta(n.meta))
      found.push(`${path} total_count: ${String(meta(p.meta))} (this release: ${String(meta(n.meta))})`);
    const key = (o: Record<string, unknown>, i: number) => String(o.resource_uri ?? o.account ?? o.hour ?? i);
    const byKey = new Map((n.objects as Array<Record<string, unknown>>).map((o, i) => [key(o, i), o]));
    (p.objects as Array<Record<string, unknown>>).forEach((o, i) => {
      const other = byKey.get(key(o, i));
      if (!other) found.push(`${path}: ${key(o, i)} is not in this release's answer`);
      else compare(`${path} ${key(o, i)}`, o, other);
    });
    if (p.objects.length !== n.objects.length)
      found.push(`${path}: ${p.objects.length} objects (this release: ${n.objects.length})`);
  } else compare(path, p, n);
  return found;
}
