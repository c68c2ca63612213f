import { randomBytes } from 'node:crypto';
import {
  errors,
  formatContainerAcl,
  parseContainerAcl,
  swiftAccountOf,
  tempUrlOf,
  type Cluster,
  type ContainerAclInput,
  type ParsedAcl,
  type TempUrlKeyActionInput,
  type TempUrlMethod,
  type TempUrlRequestInput,
} from '@cairn/domain';
import type { Db } from '../db/database';
import { getCluster } from '../repositories/clusters';
import { findStorageUserByName } from '../repositories/storage-users';
import { GATEWAY_TOKEN_ENDED, type LiveStorageUserSession, type StorageUserSessions } from './storage-user-sessions';

/**
 * "Sharing": a signed-in storage user's container ACLs, temp-URL keys and temporary URLs. The
 * management API makes these few metadata calls to the cluster's Swift (`<storage_url>/AUTH_<user>`)
 * with the token the user's sign-in got, so Swift's own rules apply (only the account's owner sets
 * ACLs and keys); the browser never talks to Swift for them, and no object data passes through.
 * Every path is the session's own account: nothing in a request names another one.
 */

/** How long Swift may take for one metadata request. */
const TIMEOUT_MS = 10_000;
/** Containers listed (each needs its own HEAD for its ACLs); past this many the answer says so. */
export const CONTAINERS_LISTED = 200;
/** HEADs at once. */
const CONCURRENCY = 8;

export interface SharedContainer {
  name: string;
  objectCount: number;
  bytesUsed: number;
  read: ParsedAcl;
  write: ParsedAcl;
}

export interface TempUrlKeys {
  key: boolean;
  previousKey: boolean;
  /** Swift's /info `tempurl` entry: null when the proxy has no tempurl middleware. */
  tempurl: { methods: string[] } | null;
}

export interface TempUrl {
  url: string;
  method: TempUrlMethod;
  expiresAt: Date;
}

/** Where and as whom the calls of one request go. */
interface Reach {
  cluster: Cluster;
  token: string;
}

interface SwiftAnswer {
  status: number;
  headers: Headers;
  text: string;
}

export class SelfSharing {
  constructor(
    private readonly db: Db,
    private readonly sessions: StorageUserSessions,
    /** The longest temporary URL lifetime (CAIRN_TEMP_URL_MAX_SECONDS). */
    readonly maxTempUrlSeconds: number,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * One page of the account's containers: the first CONTAINERS_LISTED after `marker` (Swift's
   * listing order; null: from the first), and the marker of the next page when there are more.
   */
  async listContainers(
    sessionId: string,
    session: LiveStorageUserSession,
    marker: string | null,
  ): Promise<{ containers: SharedContainer[]; truncated: boolean; nextMarker: string | null }> {
    const after = marker === null ? '' : `&marker=${encodeURIComponent(marker)}`;
    // The cluster and token are read once for the listing and every HEAD after it.
    const to = await this.reach(sessionId, session);
    const listing = await this.swift(to, session, 'GET', `?format=json&limit=${CONTAINERS_LISTED + 1}${after}`);
    let rows: Array<{ name?: unknown; count?: unknown; bytes?: unknown }> = [];
    try {
      rows = listing.text ? (JSON.parse(listing.text) as typeof rows) : [];
    } catch {
      throw unexpected(session, 'the account listing is no JSON');
    }
    const names = rows.map((r) => String(r.name ?? '')).filter(Boolean);
    const truncated = names.length > CONTAINERS_LISTED;
    const wanted = names.slice(0, CONTAINERS_LISTED);
    const containers: SharedContainer[] = new Array(wanted.length);
    let next = 0;
    const worker = async () => {
      while (next < wanted.length) {
        const i = next++;
        containers[i] = await this.containerAt(to, session, wanted[i]!);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, wanted.length) }, worker));
    return { containers, truncated, nextMarker: truncated ? wanted[wanted.length - 1]! : null };
  }

  async container(sessionId: string, session: LiveStorageUserSession, name: string): Promise<SharedContainer> {
    return this.containerAt(await this.reach(sessionId, session), session, name);
  }

  private async containerAt(to: Reach, session: LiveStorageUserSession, name: string): Promise<SharedContainer> {
    const head = await this.swift(to, session, 'HEAD', `/${encodeURIComponent(name)}`, {}, name);
    return {
      name,
      objectCount: Number(head.headers.get('x-container-object-count') ?? 0),
      bytesUsed: Number(head.headers.get('x-container-bytes-used') ?? 0),
      read: parseContainerAcl(head.headers.get('x-container-read')),
      write: parseContainerAcl(head.headers.get('x-container-write')),
    };
  }

  /**
   * Sets the container's read and write ACLs from the choices; entries none of them means (another
   * referrer, a role) are kept. Every user named must exist in the session's cluster: one that does
   * not is refused before anything is sent to Swift.
   */
  async setAcls(
    sessionId: string,
    session: LiveStorageUserSession,
    name: string,
    input: ContainerAclInput,
  ): Promise<SharedContainer> {
    const missing: string[] = [];
    for (const user of new Set([...input.read_users, ...input.write_users])) {
      if (!(await findStorageUserByName(this.db, session.clusterId, user))) missing.push(user);
    }
    if (missing.length) {
      throw errors.invalidInput(
        `No user ${missing.map((u) => `'${u}'`).join(', ')} in cluster '${session.clusterName}': an ACL names other users of your cluster, by their user names.`,
      );
    }
    const to = await this.reach(sessionId, session);
    const before = await this.containerAt(to, session, name);
    const read = formatContainerAcl({
      users: input.read_users,
      publicRead: input.public_read,
      listings: input.public_listings,
      other: before.read.other,
    });
    const write = formatContainerAcl({
      users: input.write_users,
      publicRead: false,
      listings: false,
      other: before.write.other,
    });
    // An empty value would be stored as an empty ACL; Swift's X-Remove-* drops the header instead.
    const headers: Record<string, string> = {
      ...(read ? { 'X-Container-Read': read } : { 'X-Remove-Container-Read': '1' }),
      ...(write ? { 'X-Container-Write': write } : { 'X-Remove-Container-Write': '1' }),
    };
    await this.swift(to, session, 'POST', `/${encodeURIComponent(name)}`, headers, name);
    return this.containerAt(to, session, name);
  }

  async tempUrlKeys(sessionId: string, session: LiveStorageUserSession): Promise<TempUrlKeys> {
    const to = await this.reach(sessionId, session);
    const [head, tempurl] = await Promise.all([
      this.swift(to, session, 'HEAD', ''),
      this.tempurlInfo(session, to.cluster),
    ]);
    return {
      key: Boolean(head.headers.get('x-account-meta-temp-url-key')),
      previousKey: Boolean(head.headers.get('x-account-meta-temp-url-key-2')),
      tempurl,
    };
  }

  /**
   * set: a new key, no previous one (every link made before stops working). rotate: the current
   * key moves to the second slot (`Temp-URL-Key-2`, which tempurl also accepts) and a new one takes
   * its place, so links made with it keep working until the next rotation. drop_previous: the
   * second slot is emptied. Keys are made here and never leave the server.
   */
  async changeTempUrlKeys(
    sessionId: string,
    session: LiveStorageUserSession,
    input: TempUrlKeyActionInput,
  ): Promise<TempUrlKeys> {
    const fresh = () => randomBytes(32).toString('base64url');
    const to = await this.reach(sessionId, session);
    let headers: Record<string, string>;
    if (input.action === 'drop_previous') {
      headers = { 'X-Remove-Account-Meta-Temp-URL-Key-2': '1' };
    } else if (input.action === 'set') {
      headers = { 'X-Account-Meta-Temp-URL-Key': fresh(), 'X-Remove-Account-Meta-Temp-URL-Key-2': '1' };
    } else {
      const head = await this.swift(to, session, 'HEAD', '');
      const current = head.headers.get('x-account-meta-temp-url-key');
      headers = {
        'X-Account-Meta-Temp-URL-Key': fresh(),
        ...(current ? { 'X-Account-Meta-Temp-URL-Key-2': current } : {}),
      };
    }
    await this.swift(to, session, 'POST', '', headers);
    return this.tempUrlKeys(sessionId, session);
  }

  /** A temporary URL signed with the account's current key, read from Swift here. */
  async tempUrl(sessionId: string, session: LiveStorageUserSession, input: TempUrlRequestInput): Promise<TempUrl> {
    if (input.lifetime_seconds > this.maxTempUrlSeconds) {
      throw errors.invalidInput(
        `The lifetime_seconds field is at most ${this.maxTempUrlSeconds} (the longest a temporary URL may work here).`,
      );
    }
    const cluster = await this.clusterOf(session);
    const tempurl = await this.tempurlInfo(session, cluster);
    if (!tempurl) throw errors.conflict(NO_TEMPURL(session));
    if (!tempurl.methods.includes(input.method)) {
      throw errors.invalidInput(
        `This cluster's Swift makes temporary URLs for ${tempurl.methods.join(', ')} only, not ${input.method}.`,
      );
    }
    const head = await this.swift(await this.reach(sessionId, session), session, 'HEAD', '');
    const key = head.headers.get('x-account-meta-temp-url-key');
    if (!key) throw errors.conflict('Your account has no temporary URL key yet: set one first.');
    const expires = Math.floor(this.now().getTime() / 1000) + input.lifetime_seconds;
    return {
      url: tempUrlOf(
        cluster.storageUrl,
        swiftAccountOf(session.username),
        input.container,
        input.object,
        input.method,
        expires,
        key,
      ),
      method: input.method,
      expiresAt: new Date(expires * 1000),
    };
  }

  /** Swift's `/info` (beside `/v1`): its `tempurl` entry, or null when there is none. */
  private async tempurlInfo(session: LiveStorageUserSession, known?: Cluster): Promise<TempUrlKeys['tempurl']> {
    const cluster = known ?? (await this.clusterOf(session));
    const url = `${cluster.storageUrl.replace(/\/+$/, '').replace(/\/v1$/, '')}/info`;
    let res: Response;
    try {
      res = await fetch(url, { headers: { Accept: 'application/json' }, signal: AbortSignal.timeout(TIMEOUT_MS) });
    } catch (e) {
      throw errors.unavailable(unreachable(cluster), { cause: e instanceof Error ? e.message : String(e) });
    }
    const text = await res.text();
    if (res.status !== 200) throw errors.unavailable(unreachable(cluster), { cause: `/info answered ${res.status}` });
    let info: { tempurl?: { methods?: unknown; allowed_digests?: unknown } };
    try {
      info = JSON.parse(text) as typeof info;
    } catch {
      throw errors.unavailable(unreachable(cluster), { cause: '/info is no JSON' });
    }
    const t = info.tempurl;
    if (!t) return null;
    // Older tempurl (no allowed_digests) checks SHA-1 only; the signatures made here are SHA-256.
    if (!Array.isArray(t.allowed_digests) || !t.allowed_digests.includes('sha256')) return null;
    const methods = Array.isArray(t.methods) ? t.methods.map(String) : ['GET', 'HEAD', 'PUT'];
    return { methods: ['GET', 'HEAD', 'PUT'].filter((m) => methods.includes(m)) };
  }

  private async clusterOf(session: LiveStorageUserSession): Promise<Cluster> {
    const cluster = await getCluster(this.db, session.clusterId);
    if (!cluster) throw errors.unauthenticated(GATEWAY_TOKEN_ENDED);
    return cluster;
  }

  /** The cluster's Swift and the session's token: read once per request, however many calls it makes. */
  private async reach(sessionId: string, session: LiveStorageUserSession): Promise<Reach> {
    const [cluster, token] = await Promise.all([
      this.clusterOf(session),
      this.sessions.gatewayToken(sessionId, session),
    ]);
    return { cluster, token };
  }

  /**
   * One request to `<storage_url>/AUTH_<the session's user><path>` with the session's token. A 401
   * means the token no longer works, and the session ends with it; a 403 is Swift refusing (the
   * token's roles do not own the account); a 404 names the container.
   */
  private async swift(
    { cluster, token }: Reach,
    session: LiveStorageUserSession,
    method: 'GET' | 'HEAD' | 'POST',
    path: string,
    headers: Record<string, string> = {},
    container?: string,
  ): Promise<SwiftAnswer> {
    const url = `${cluster.storageUrl.replace(/\/+$/, '')}/${encodeURIComponent(swiftAccountOf(session.username))}${path}`;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: { ...headers, 'X-Auth-Token': token },
        redirect: 'error',
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (e) {
      throw errors.unavailable(unreachable(cluster), { cause: e instanceof Error ? e.message : String(e) });
    }
    const text = method === 'HEAD' ? '' : await res.text();
    if (res.status < 300) return { status: res.status, headers: res.headers, text };
    if (res.status === 401) {
      await this.sessions.end(session);
      throw errors.unauthenticated(GATEWAY_TOKEN_ENDED);
    }
    if (res.status === 404 && container !== undefined) throw errors.notFound(`You have no container '${container}'.`);
    if (res.status === 403)
      throw errors.forbidden("The cluster's Swift refused: your sign-in may not change this account's settings.");
    throw errors.unavailable(unreachable(cluster), { cause: `answered ${res.status}` });
  }
}

const NO_TEMPURL = (session: LiveStorageUserSession) =>
  `Cluster '${session.clusterName}' makes no temporary URLs: its Swift proxy has no tempurl middleware (with SHA-256) in its pipeline.`;

const unreachable = (cluster: Cluster) =>
  `The cluster's Swift (${cluster.storageUrl}) did not answer as expected; try again later, or tell an operator.`;

const unexpected = (session: LiveStorageUserSession, why: string) =>
  errors.unavailable(
    `The Swift of cluster '${session.clusterName}' did not answer as expected; try again later, or tell an operator.`,
    { cause: why },
  );
