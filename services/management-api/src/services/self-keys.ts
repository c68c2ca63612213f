import { errors, type Cluster, type SelfApplicationCredentialInput, type SelfS3CredentialInput } from '@cairn/domain';
import type { Db } from '../db/database';
import { getCluster } from '../repositories/clusters';
import { GATEWAY_TOKEN_ENDED, type LiveStorageUserSession, type StorageUserSessions } from './storage-user-sessions';

/**
 * "My keys": a signed-in storage user's S3 and application credentials, made, listed and deleted
 * through its cluster's own gateway (Keystone's OS-EC2 and application credential APIs) with the
 * token the user's sign-in got. So the gateway's rules and limits are the ones that apply (its cap
 * of credentials per user, its rate of S3 key changes, its audit records naming the user), and the
 * gateway itself checks that the token's user is the one the path names. The path is always the
 * session's own user: nothing in a request names a user.
 */

/** How long the gateway may take: a write is one transaction and an audit record. */
const TIMEOUT_MS = 10_000;

export interface SelfS3Credential {
  accessKey: string;
  expiresAt: string | null;
  /** Only in the answer that creates it. */
  secret?: string;
}

export interface SelfAccessRule {
  id: string;
  service: string;
  method: string;
  path: string;
}

export interface SelfApplicationCredential {
  id: string;
  name: string;
  description: string | null;
  expiresAt: string | null;
  unrestricted: boolean;
  roles: string[];
  accessRules: SelfAccessRule[];
  /** Only in the answer that creates it. */
  secret?: string;
}

/** Keystone's "The server could not comply …" tail is for machines; the sentence before it is the user's. */
const KEYSTONE_TAIL = / ?The server could not comply with the request.*$/s;

interface GatewayAnswer {
  status: number;
  body: Record<string, unknown> | null;
  headers: Headers;
}

export class SelfKeys {
  constructor(
    private readonly db: Db,
    private readonly sessions: StorageUserSessions,
  ) {}

  async listS3(sessionId: string, session: LiveStorageUserSession): Promise<SelfS3Credential[]> {
    const answer = await this.call(sessionId, session, 'GET', 'credentials/OS-EC2');
    return arrayOf(answer.body?.credentials).map(s3Of);
  }

  async createS3(
    sessionId: string,
    session: LiveStorageUserSession,
    input: SelfS3CredentialInput,
  ): Promise<SelfS3Credential> {
    const answer = await this.call(sessionId, session, 'POST', 'credentials/OS-EC2', {
      tenant_id: session.username,
      ...(input.expires_at ? { expires_at: input.expires_at.toISOString() } : {}),
    });
    const created = s3Of(answer.body?.credential);
    if (typeof created.secret !== 'string') throw unexpected(session, 'no secret in its answer');
    return created;
  }

  async deleteS3(sessionId: string, session: LiveStorageUserSession, accessKey: string): Promise<void> {
    await this.call(sessionId, session, 'DELETE', `credentials/OS-EC2/${encodeURIComponent(accessKey)}`);
  }

  async listApplicationCredentials(
    sessionId: string,
    session: LiveStorageUserSession,
  ): Promise<SelfApplicationCredential[]> {
    const answer = await this.call(sessionId, session, 'GET', 'application_credentials');
    return arrayOf(answer.body?.application_credentials).map(applicationCredentialOf);
  }

  async createApplicationCredential(
    sessionId: string,
    session: LiveStorageUserSession,
    input: SelfApplicationCredentialInput,
  ): Promise<SelfApplicationCredential> {
    const answer = await this.call(sessionId, session, 'POST', 'application_credentials', {
      application_credential: {
        name: input.name,
        ...(input.description ? { description: input.description } : {}),
        expires_at: input.expires_at ? input.expires_at.toISOString() : null,
        unrestricted: input.unrestricted,
        ...(input.access_rules?.length ? { access_rules: input.access_rules } : {}),
      },
    });
    const created = applicationCredentialOf(answer.body?.application_credential);
    if (typeof created.secret !== 'string') throw unexpected(session, 'no secret in its answer');
    return created;
  }

  async deleteApplicationCredential(sessionId: string, session: LiveStorageUserSession, id: string): Promise<void> {
    await this.call(sessionId, session, 'DELETE', `application_credentials/${encodeURIComponent(id)}`);
  }

  /**
   * One call to `<auth_url>/v3/users/<the session's user>/<path>` with the session's token. The
   * gateway's refusals come back as the same status with its sentence; a 401 means the token no
   * longer works (expired, revoked, pushed out by the user's cap of live tokens), and so the
   * session ends with it.
   */
  private async call(
    sessionId: string,
    session: LiveStorageUserSession,
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body?: unknown,
  ): Promise<GatewayAnswer> {
    const cluster = await getCluster(this.db, session.clusterId);
    if (!cluster) throw errors.unauthenticated(GATEWAY_TOKEN_ENDED);
    const token = await this.sessions.gatewayToken(sessionId, session);
    const base = cluster.authUrl.replace(/\/+$/, '');
    let res: Response;
    try {
      res = await fetch(`${base}/v3/users/${encodeURIComponent(session.username)}/${path}`, {
        method,
        headers: {
          'X-Auth-Token': token,
          Accept: 'application/json',
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        redirect: 'error',
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (e) {
      throw errors.unavailable(unreachable(cluster), { cause: e instanceof Error ? e.message : String(e) });
    }
    const text = await res.text();
    let parsed: Record<string, unknown> | null = null;
    try {
      parsed = text ? (JSON.parse(text) as Record<string, unknown>) : null;
    } catch {
      parsed = null;
    }
    const answer = { status: res.status, body: parsed, headers: res.headers };
    if (res.status < 300) return answer;
    if (res.status === 401) {
      await this.sessions.end(session);
      throw errors.unauthenticated(GATEWAY_TOKEN_ENDED);
    }
    const said = (parsed?.error as { message?: unknown } | undefined)?.message;
    const sentence = typeof said === 'string' ? said.replace(KEYSTONE_TAIL, '').trim() : '';
    if (!sentence || res.status >= 500)
      throw errors.unavailable(unreachable(cluster), { cause: `answered ${res.status}` });
    switch (res.status) {
      case 400:
        throw errors.invalidInput(sentence);
      case 403:
        // The one refusal of a user's own keys: its sign-in was a restricted application credential.
        throw errors.forbidden(/application.credential/i.test(sentence) ? CREDENTIAL_SIGN_IN : sentence);
      case 404:
        throw errors.notFound(sentence);
      case 409:
        throw errors.conflict(sentence);
      case 429: {
        const retry = Number(res.headers.get('retry-after'));
        throw errors.tooManyRequests(sentence, Number.isFinite(retry) && retry > 0 ? retry : 1);
      }
      default:
        throw errors.unavailable(unreachable(cluster), { cause: `answered ${res.status}` });
    }
  }
}

/** Why My keys refuses a write to a session opened with a restricted credential (docs/self-service.md). */
export const CREDENTIAL_SIGN_IN =
  'You signed in with a restricted application credential, which may not make or delete keys. Sign in with your password, or an unrestricted application credential, to make or delete keys.';

const unreachable = (cluster: Cluster) =>
  `The cluster's authentication service (${cluster.authUrl}) did not answer as expected; try again later, or tell an operator.`;

const unexpected = (session: LiveStorageUserSession, why: string) =>
  errors.unavailable(
    `The authentication service of cluster '${session.clusterName}' did not answer as expected; try again later, or tell an operator.`,
    { cause: why },
  );

const arrayOf = (v: unknown): Array<Record<string, unknown>> =>
  Array.isArray(v) ? (v.filter((x) => x !== null && typeof x === 'object') as Array<Record<string, unknown>>) : [];

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
/** Keystone writes microseconds; this API's times are milliseconds, as everywhere else in it. */
const timeOf = (v: unknown): string | null => {
  const t = typeof v === 'string' ? new Date(v) : null;
  return t && !Number.isNaN(t.getTime()) ? t.toISOString() : null;
};

function s3Of(v: unknown): SelfS3Credential {
  const c = (v ?? {}) as Record<string, unknown>;
  return {
    accessKey: String(c.access ?? ''),
    expiresAt: timeOf(c.expires_at),
    ...(typeof c.secret === 'string' ? { secret: c.secret } : {}),
  };
}

function applicationCredentialOf(v: unknown): SelfApplicationCredential {
  const c = (v ?? {}) as Record<string, unknown>;
  return {
    id: String(c.id ?? ''),
    name: String(c.name ?? ''),
    description: text(c.description),
    expiresAt: timeOf(c.expires_at),
    unrestricted: c.unrestricted === true,
    roles: arrayOf(c.roles).map((r) => String(r.name ?? r.id ?? '')),
    accessRules: arrayOf(c.access_rules).map((r) => ({
      id: String(r.id ?? ''),
      service: String(r.service ?? ''),
      method: String(r.method ?? ''),
      path: String(r.path ?? ''),
    })),
    ...(typeof c.secret === 'string' ? { secret: c.secret } : {}),
  };
}
