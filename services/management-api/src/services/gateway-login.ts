import { errors, type Cluster } from '@cairn/domain';

/**
 * A storage user's password or application credential, checked by the cluster's own auth gateway:
 * its Keystone V3 login (`POST <auth_url>/v3/auth/tokens`, method `password` or
 * `application_credential`), the one login flow of Swift V1, Keystone V2.0 and V3.
 * So a console sign-in runs the same verifier (its imported hashes and their rehash included) under
 * the same failed-login limits and counters, kept in the gateway's token store, as any other login;
 * the management API holds no copy of either (see docs/self-service.md).
 */

export type GatewayLoginResult =
  | { ok: true; username: string; token: string; applicationCredential: SignedInCredential | null }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'limited'; retryAfterSeconds: number; message: string };

/** The application credential a sign-in used, as the gateway's token says: what its token may do. */
export interface SignedInCredential {
  id: string;
  name: string;
  /** Not unrestricted: the gateway lets its token make or remove no credentials (My keys). */
  restricted: boolean;
  /** Access rules: its token reaches only the object-store requests they name, never the gateway's API. */
  accessRuled: boolean;
}

/** What the gateway is asked to check: a password, or an application credential (by id, or by name and user). */
export type GatewayLogin =
  | { method: 'password'; username: string; password: string }
  | { method: 'application_credential'; id?: string; name?: string; username?: string; secret: string };

/** How long the gateway may take: a password check is one scrypt run, possibly queued behind others. */
const TIMEOUT_MS = 10_000;

const UNREACHABLE = (url: string) =>
  `The cluster's authentication service (${url}) did not answer as expected; try again later, or tell an operator.`;

/**
 * The token the login gets is returned, not revoked: the session keeps it, sealed, to call the
 * gateway as the user ("My keys"); whoever does not keep it revokes it (revokeGatewayToken).
 *
 * `clientAddress`: the browser's address, sent as X-Forwarded-For so that the gateway's
 * per-address limits count the person signing in, not this API; the gateway believes it only when
 * this API's address is among its CAIRN_TRUST_PROXY addresses (else every console sign-in counts
 * under this API's one address).
 */
export async function loginWithGateway(
  cluster: Cluster,
  login: GatewayLogin,
  clientAddress: string | undefined,
): Promise<GatewayLoginResult> {
  const base = cluster.authUrl.replace(/\/+$/, '');
  const user = (name: string) => ({ name, domain: { id: 'default' } });
  const identity =
    login.method === 'password'
      ? { methods: ['password'], password: { user: { ...user(login.username), password: login.password } } }
      : {
          methods: ['application_credential'],
          application_credential: {
            ...(login.id !== undefined ? { id: login.id } : {}),
            ...(login.name !== undefined ? { name: login.name, user: user(login.username ?? '') } : {}),
            secret: login.secret,
          },
        };
  const body = { auth: { identity } };
  let res: Response;
  try {
    res = await fetch(`${base}/v3/auth/tokens?nocatalog`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json',
        ...(clientAddress ? { 'X-Forwarded-For': clientAddress } : {}),
      },
      body: JSON.stringify(body),
      redirect: 'error',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (e) {
    throw errors.unavailable(UNREACHABLE(base), { cause: e instanceof Error ? e.message : String(e) });
  }
  // 400: the gateway's own rules refuse the name or password as sent; to the user, a wrong one.
  if (res.status === 401 || res.status === 400) {
    await res.body?.cancel();
    return { ok: false, reason: 'invalid' };
  }
  if (res.status === 429) {
    const retry = Number(res.headers.get('retry-after'));
    const answer = (await res.json().catch(() => null)) as { error?: { message?: unknown } } | null;
    const message = typeof answer?.error?.message === 'string' ? answer.error.message : 'Too many failed logins.';
    return {
      ok: false,
      reason: 'limited',
      retryAfterSeconds: Number.isFinite(retry) && retry > 0 ? retry : 1,
      message,
    };
  }
  const token = res.headers.get('x-subject-token');
  const answer = (await res.json().catch(() => null)) as {
    token?: { user?: { name?: unknown }; application_credential?: Record<string, unknown> };
  } | null;
  const name = answer?.token?.user?.name;
  if (res.status !== 201 || !token || typeof name !== 'string') {
    throw errors.unavailable(UNREACHABLE(base), { cause: `answered ${res.status}` });
  }
  const used = answer?.token?.application_credential;
  const applicationCredential: SignedInCredential | null = used
    ? {
        id: String(used.id),
        name: String(used.name),
        restricted: used.restricted !== false,
        accessRuled: Array.isArray(used.access_rules),
      }
    : null;
  return { ok: true, username: name, token, applicationCredential };
}

/**
 * Revokes a token of the cluster's gateway (itself as caller), at sign-out or when a sign-in does
 * not keep it; best effort: an unreachable gateway leaves it to expire (it counts against the
 * user's cap of live tokens until then).
 */
export async function revokeGatewayToken(cluster: Cluster, token: string): Promise<void> {
  const base = cluster.authUrl.replace(/\/+$/, '');
  await fetch(`${base}/v3/auth/tokens`, {
    method: 'DELETE',
    headers: { 'X-Auth-Token': token, 'X-Subject-Token': token },
    redirect: 'error',
    signal: AbortSignal.timeout(TIMEOUT_MS),
  }).then(
    (r) => r.body?.cancel(),
    () => undefined,
  );
}
