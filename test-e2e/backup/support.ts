import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { signedBody } from '../s3/s3-client';
import { NO_KEEP_ALIVE } from '../support/processes';

/**
 * What a backup must bring back, made through the real API before the backup and checked through
 * the real services after the restore: a storage user who logs in with its password (only its
 * hash is stored), an S3 credential whose signatures verify (its secret is sealed under
 * CAIRN_S3_SECRET_KEYS), and an hour of utilization history.
 */
export interface Populated {
  user: string;
  password: string;
  access: string;
  secret: string;
  hour: string;
  detail: unknown;
}

async function api(apiUrl: string, auth: string, method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown) {
  const res = await fetch(`${apiUrl}/api/v1/${path}`, {
    method,
    headers: {
      Authorization: auth,
      Accept: 'application/json',
      ...NO_KEEP_ALIVE,
      ...(body ? { 'Content-Type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, json: (text ? JSON.parse(text) : null) as Record<string, unknown> };
}

export async function populate(apiUrl: string, auth: string): Promise<Populated> {
  const user = `keeper${randomBytes(3).toString('hex')}`;
  const password = `${randomBytes(18).toString('base64url')}-pw`;
  const made = await api(apiUrl, auth, 'POST', 'users/', { cluster: '/api/v1/clusters/1/', user, password });
  expect(made.status).toBe(201);
  const cred = await api(apiUrl, auth, 'POST', 's3_credentials/', { user: made.json.resource_uri });
  expect(cred.status).toBe(201);
  const hourMs = Math.floor((Date.now() - 3_600_000) / 3_600_000) * 3_600_000;
  const hour = new Date(hourMs).toISOString();
  const sample = { account: `AUTH_${user}`, bytes_used: 123_456_789, object_count: 42, container_count: 3 };
  const rec = await api(apiUrl, auth, 'POST', 'clusters/1/utilization/storage/', {
    interval: 3600,
    sampled_at: new Date(hourMs + 60_000).toISOString(),
    samples: [sample],
  });
  expect(rec.status).toBe(200);
  const detail = await readDetail(apiUrl, auth, user, hour);
  expect(detail).toEqual([
    expect.objectContaining({ bytes_used: 123_456_789, object_count: 42, container_count: 3, pct_complete: 100 }),
  ]);
  return { user, password, access: cred.json.access_key as string, secret: cred.json.secret as string, hour, detail };
}

async function readDetail(apiUrl: string, auth: string, user: string, hour: string): Promise<unknown> {
  const end = new Date(Date.parse(hour) + 3_600_000).toISOString();
  const res = await api(
    apiUrl,
    auth,
    'GET',
    `clusters/1/utilization/storage/total/AUTH_${user}/detail/?start=${hour}&end=${end}`,
  );
  expect(res.status).toBe(200);
  return res.json.objects;
}

/** The three things a restored database must do, each through the service that does it. */
export async function expectRestored(apiUrl: string, gatewayUrl: string, auth: string, p: Populated): Promise<void> {
  // The user logs in through the gateway with its password.
  const login = await request(gatewayUrl)
    .post('/auth/v3/auth/tokens')
    .set(NO_KEEP_ALIVE)
    .send({
      auth: {
        identity: {
          methods: ['password'],
          password: { user: { name: p.user, domain: { id: 'default' }, password: p.password } },
        },
        scope: { project: { name: p.user, domain: { id: 'default' } } },
      },
    });
  expect(login.status).toBe(201);
  expect(login.headers['x-subject-token']).toBeTruthy();
  // The S3 secret opens: a signature made with it verifies, and one made with another does not.
  const ok = await request(gatewayUrl)
    .post('/auth/v3/s3tokens')
    .set(NO_KEEP_ALIVE)
    .send(signedBody(p.access, p.secret, 'v4'));
  expect(ok.status).toBe(200);
  const bad = await request(gatewayUrl)
    .post('/auth/v3/s3tokens')
    .set(NO_KEEP_ALIVE)
    .send(signedBody(p.access, `${p.secret}x`, 'v4'));
  expect(bad.status).toBe(401);
  // The utilization history reads back as it was recorded.
  expect(await readDetail(apiUrl, auth, p.user, p.hour)).toEqual(p.detail);
}
