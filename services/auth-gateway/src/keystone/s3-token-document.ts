import type { UserRecord } from '../credentials/users';
import { rolesFor } from '../tokens/roles';
import type { TokenApplicationCredential, TokenRecord } from '../tokens/store';
import { v3TokenBody, type Endpoints } from './documents';
import { asWsgiString, type Spelling } from './wsgi-names';

/** The auth method Keystone names in tokens issued for EC2/S3 signatures. */
export const EC2_CREDENTIAL_METHOD = 'ec2credential';

export interface S3TokenTimes {
  nowMs: number;
  /** How long the answer says the identity holds; nothing is stored for it. */
  lifetimeSeconds: number;
  /** A fresh random audit id (tokens/random.ts), as every Keystone token carries one. */
  auditId: string;
  /** The credential's (or its application credential's) expiry, epoch ms: the answer says no later. */
  notAfterMs?: number | null;
}

/**
 * A key bound to an application credential: the identity carries that credential's roles and names it, as Keystone's
 * EC2 tokens do.
 */
export interface S3TokenApplicationCredential {
  credential: TokenApplicationCredential;
  roles: string[];
}

/**
 * The identity a verified S3 signature proves: the credential's user, scoped to its own account
 * (project = username, as for a password login), with the roles a password token would carry
 * (swiftoperator; superusers also ResellerAdmin), or, for a key made with an application
 * credential's token, that credential's roles. It is only rendered, never put in the token
 * store: an s3tokens answer is not a token anyone can present again.
 */
export function s3TokenRecord(
  user: Pick<UserRecord, 'id' | 'username' | 'isSuperuser' | 'generation'>,
  times: S3TokenTimes,
  appCred?: S3TokenApplicationCredential,
): TokenRecord {
  const lifetimeEnd = times.nowMs + times.lifetimeSeconds * 1000;
  return {
    user: user.username,
    userId: user.id,
    project: user.username,
    projectDomain: 'default',
    roles: appCred ? appCred.roles : rolesFor(user, user.username),
    methods: [EC2_CREDENTIAL_METHOD],
    userDomain: 'default',
    issuedAt: new Date(times.nowMs).toISOString(),
    expiresAt: new Date(times.notAfterMs != null ? Math.min(lifetimeEnd, times.notAfterMs) : lifetimeEnd).toISOString(),
    generation: user.generation,
    auditId: times.auditId,
    ...(appCred ? { applicationCredential: appCred.credential } : {}),
  };
}

export interface S3TokensBodyOptions {
  /** Keystone adds the catalog; Swift's s3token reads none of it, so it is left out unless asked for. */
  withCatalog?: boolean;
  /**
   * How ids and names are spelt (wsgi-names.ts). The reader is a Swift proxy's s3token, which
   * puts `AUTH_<project.id>` into the request path and the names into X-Project-Id & co. for
   * keystoneauth to compare with that path: as a Python 3 WSGI string, like every validation answer.
   */
  spell?: Spelling;
}

/**
 * The 200 answer to `POST /v3/s3tokens`: a Keystone V3 token document as
 * keystone/api/s3tokens.py renders it, read by s3token's parse_v3_response (token.user with its
 * domain, token.project with its domain, token.roles[].name). Like Keystone's, it carries no
 * token id, and the route must send no X-Subject-Token: a signature seen once (in a presigned
 * URL, say) must not become a bearer token.
 */
export function s3TokensBody(
  record: TokenRecord,
  endpoints: Endpoints,
  options: S3TokensBodyOptions = {},
): Record<string, unknown> {
  if (record.project === undefined)
    throw new RangeError("an s3tokens answer is always scoped to the credential owner's project");
  return v3TokenBody(
    { ...record, methods: [EC2_CREDENTIAL_METHOD] },
    endpoints,
    options.withCatalog ?? false,
    options.spell ?? asWsgiString,
  );
}
