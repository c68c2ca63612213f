/** Small HTTP clients for the management API and the gateway, addressed by base URL (a replica or nginx). */

export interface Answer {
  status: number;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  headers: Headers;
}

/** Every request has a deadline: a hung replica must show up as a failure, not a hung test. */
const DEADLINE_MS = 15_000;

export async function apiCall(
  base: string,
  auth: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      Authorization: auth,
      Accept: 'application/json',
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(DEADLINE_MS),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = { raw: text };
  }
  return { status: res.status, json, headers: res.headers };
}

/** Swift V1 login (GET): the token, or undefined when refused. */
export async function v1Login(
  base: string,
  user: string,
  password: string,
): Promise<{ status: number; token?: string; headers: Headers }> {
  const res = await fetch(`${base}/auth/v1.0`, {
    headers: { 'X-Auth-User': user, 'X-Auth-Key': password },
    signal: AbortSignal.timeout(DEADLINE_MS),
  });
  await res.arrayBuffer();
  return { status: res.status, token: res.headers.get('x-auth-token') ?? undefined, headers: res.headers };
}

/** Keystone V3 password login (POST), project-scoped to the user's own account. */
export async function v3Login(
  base: string,
  user: string,
  password: string,
): Promise<{ status: number; token?: string; headers: Headers }> {
  const res = await fetch(`${base}/auth/v3/auth/tokens`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      auth: {
        identity: { methods: ['password'], password: { user: { name: user, domain: { id: 'default' }, password } } },
        scope: { project: { name: user, domain: { id: 'default' } } },
      },
    }),
    signal: AbortSignal.timeout(DEADLINE_MS),
  });
  await res.arrayBuffer();
  return { status: res.status, token: res.headers.get('x-subject-token') ?? undefined, headers: res.headers };
}

/** Keystone V3 validation as the Swift proxy does it: 200 for a live token, 404 otherwise. */
export async function validate(
  base: string,
  serviceToken: string,
  subject: string,
): Promise<{ status: number; headers: Headers }> {
  const res = await fetch(`${base}/auth/v3/auth/tokens`, {
    headers: { 'X-Auth-Token': serviceToken, 'X-Subject-Token': subject },
    signal: AbortSignal.timeout(DEADLINE_MS),
  });
  await res.arrayBuffer();
  return { status: res.status, headers: res.headers };
}

/** Keystone V2 validation: GET /auth/v2.0/tokens/<id>. */
export async function validateV2(base: string, serviceToken: string, subject: string): Promise<number> {
  const res = await fetch(`${base}/auth/v2.0/tokens/${encodeURIComponent(subject)}`, {
    headers: { 'X-Auth-Token': serviceToken },
    signal: AbortSignal.timeout(DEADLINE_MS),
  });
  await res.arrayBuffer();
  return res.status;
}
