import { errors, type Cluster } from '@cairn/domain';
import type { Db } from '../db/database';
import { findClusterByUuid } from '../repositories/clusters';
import { findStorageUserByName } from '../repositories/storage-users';
import type { StorageUserIdentity } from './my-storage';

/**
 * A storage user's own gateway token (`X-Auth-Token`, as `swift auth` or a V3 login hands it out),
 * taken by `GET /api/v1/self/storage/` so that scripts read their usage without a console session.
 *
 * The management API holds neither the gateways' signing keys nor their token store (Redis), and
 * gets neither: it asks the cluster's own gateway, with Keystone's validation
 * (`GET <auth_url>/v3/auth/tokens`, the token as both caller and subject, which Keystone's policy
 * lets any token do for itself), exactly as a Swift proxy checks a token. So a token is good here
 * exactly when Swift would take it: revoked, expired, pushed out by the per-user cap, its user
 * disabled or changed, its application credential deleted: refused at once.
 *
 * Which gateway: a token is a JWT whose audience is its cluster's uuid. That claim is read without
 * checking the signature, only to pick whom to ask; the gateway then checks the signature and that
 * the audience is its own cluster, so a token is valid for one cluster only, and a forged audience
 * names a gateway that refuses it.
 */

/** A JWT as the gateways make them, no longer than they read (4096 characters). */
const JWT = /^[A-Za-z0-9_-]+\.([A-Za-z0-9_-]+)\.[A-Za-z0-9_-]+$/;
const MAX_TOKEN_LENGTH = 4096;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** How long the gateway may take: a validation is a few Redis reads. */
const TIMEOUT_MS = 10_000;

export const TOKEN_INVALID =
  "This token is not valid (expired, revoked, or not a token of any of this API's clusters). Log in again (swift auth, or POST /v3/auth/tokens at your cluster's auth URL) and send the new token.";

/** The same rule as a console sign-in (services/storage-user-sessions.ts, ACCESS_RULED_SIGN_IN). */
export const TOKEN_ACCESS_RULED =
  'This token comes from an application credential with access rules, which limit it to some object-store requests; reading your usage here is not one of them. Use a token from your password, or from an application credential without access rules.';

const notOwnAccount = (project: string | null) =>
  `${project === null ? 'This token is unscoped (for no account)' : `This token is for the account AUTH_${project}, not your own`}; log in without naming a project (your own account is the default) and send that token.`;

const UNREACHABLE = (url: string) =>
  `The cluster's authentication service (${url}) did not answer as expected; try again later, or tell an operator.`;

/** The cluster uuid a token names as its audience (unchecked: only to pick the gateway to ask). */
export function audienceOf(token: string): string | null {
  if (token.length > MAX_TOKEN_LENGTH) return null;
  const payload = JWT.exec(token)?.[1];
  if (payload === undefined) return null;
  try {
    const aud = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { aud?: unknown }).aud;
    return typeof aud === 'string' && UUID.test(aud) ? aud.toLowerCase() : null;
  } catch {
    return null;
  }
}

/**
 * A validation answer names users and projects as a Python 3 Swift proxy reads them: each UTF-8
 * byte one latin-1 character (the gateway's keystone/wsgi-names.ts). Back to the names as stored.
 */
const fromWsgi = (text: string): string => Buffer.from(text, 'latin1').toString('utf8');

type GatewayVerdict =
  { ok: true; username: string; project: string | null } | { ok: false; reason: 'invalid' | 'access_ruled' };

/** Asks the cluster's gateway whether `token` is live, the token itself as the caller. */
async function validateAtGateway(cluster: Cluster, token: string): Promise<GatewayVerdict> {
  const base = cluster.authUrl.replace(/\/+$/, '');
  let res: Response;
  try {
    res = await fetch(`${base}/v3/auth/tokens?nocatalog`, {
      headers: { 'X-Auth-Token': token, 'X-Subject-Token': token, Accept: 'application/json' },
      redirect: 'error',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (e) {
    throw errors.unavailable(UNREACHABLE(base), { cause: e instanceof Error ? e.message : String(e) });
  }
  if (res.status === 401 || res.status === 404) {
    await res.body?.cancel();
    return { ok: false, reason: 'invalid' };
  }
  // The gateway refuses an access-ruled token on its identity API, and only a live one: its own
  // token may validate any other token of its user (flows/validation-policy.ts).
  if (res.status === 403) {
    await res.body?.cancel();
    return { ok: false, reason: 'access_ruled' };
  }
  const answer = (await res.json().catch(() => null)) as {
    token?: { user?: { name?: unknown }; project?: { name?: unknown } };
  } | null;
  const name = answer?.token?.user?.name;
  const project = answer?.token?.project?.name;
  if (res.status !== 200 || typeof name !== 'string') {
    throw errors.unavailable(UNREACHABLE(base), { cause: `answered ${res.status}` });
  }
  return { ok: true, username: fromWsgi(name), project: typeof project === 'string' ? fromWsgi(project) : null };
}

/**
 * The storage user a gateway token belongs to, on the cluster it was made for; refused (401) when
 * the token is not live there, 403 when it is an access-ruled credential's or for another account.
 */
export async function storageUserOfToken(db: Db, token: string): Promise<StorageUserIdentity> {
  const uuid = audienceOf(token);
  const cluster = uuid === null ? null : await findClusterByUuid(db, uuid);
  if (!cluster) throw errors.unauthenticated(TOKEN_INVALID);
  const verdict = await validateAtGateway(cluster, token);
  if (!verdict.ok) {
    throw verdict.reason === 'access_ruled'
      ? errors.forbidden(TOKEN_ACCESS_RULED)
      : errors.unauthenticated(TOKEN_INVALID);
  }
  // The gateway checked the user's row and generation; enabled is read again with the row.
  const user = await findStorageUserByName(db, cluster.id, verdict.username);
  if (!user || !user.enabled) throw errors.unauthenticated(TOKEN_INVALID);
  // A token for another account (no role there) or none (unscoped) reads nothing of it here either.
  if (verdict.project !== user.username) throw errors.forbidden(notOwnAccount(verdict.project));
  return { userId: user.id, username: user.username, clusterId: cluster.id, clusterName: cluster.name };
}
