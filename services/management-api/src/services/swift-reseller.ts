import { swiftAccountOf, type SwiftQuotaInfo } from '@cairn/domain';

/**
 * What the quota reconciler says to a cluster's Swift: a reseller token from the cluster's own
 * auth gateway (a Swift V1 login of a superuser storage user, whose tokens carry ResellerAdmin, as
 * the utilization collector logs in), `/info`, and account POST, PUT and HEAD with that token.
 */

/** Per-cluster reseller credentials (CAIRN_QUOTA_CREDENTIALS). */
export interface ResellerCredentials {
  user: string;
  password: string;
  /** Where to log in when the cluster's auth_url is not reachable from here. */
  auth_url?: string;
  /** Where the Swift proxy is when the cluster's storage_url is not reachable from here. */
  storage_url?: string;
}

/** Swift (or the gateway) could not be reached at all: a cluster-wide condition, retried with backoff. */
export class SwiftUnreachable extends Error {}

/** fetch says only "fetch failed"; its cause says why (ECONNREFUSED 127.0.0.1:8080, a timeout). */
const causeOf = (e: unknown): string =>
  e instanceof Error ? ((e.cause as Error | undefined)?.message ?? e.message) : String(e);

export class SwiftReseller {
  private token: string | null = null;

  constructor(
    private readonly authUrl: string,
    /** The proxy's `/v1` base, as a cluster's storage_url. */
    private readonly storageUrl: string,
    private readonly credentials: ResellerCredentials,
    private readonly timeoutMs: number,
  ) {}

  private async call(url: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(url, { ...init, signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (e) {
      throw new SwiftUnreachable(`Swift is unreachable at ${new URL(url).origin}: ${causeOf(e)}.`);
    }
  }

  /** The reseller storage user (named in status sentences; never its password). */
  get user(): string {
    return this.credentials.user;
  }

  /** `/info` of the proxy (at the root, beside `/v1`). */
  async info(): Promise<SwiftQuotaInfo> {
    const url = `${this.storageUrl.replace(/\/+$/, '').replace(/\/v1$/, '')}/info`;
    const res = await this.call(url, { headers: { Accept: 'application/json' } });
    const text = await res.text();
    if (res.status !== 200) {
      throw new SwiftUnreachable(
        `Swift's ${url} answered HTTP ${res.status}; Cairn reads it to learn which quota headers this Swift takes (set expose_info = true in the proxy).`,
      );
    }
    let body: { swift?: { version?: unknown; policies?: Array<{ name?: unknown }> }; account_quotas?: unknown };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      throw new SwiftUnreachable(`Swift's ${url} did not answer JSON.`);
    }
    return {
      version: typeof body.swift?.version === 'string' ? body.swift.version : null,
      accountQuotas: body.account_quotas !== undefined,
      policies: (body.swift?.policies ?? []).map((p) => p.name).filter((n): n is string => typeof n === 'string'),
    };
  }

  private async login(): Promise<string> {
    const url = `${(this.credentials.auth_url ?? this.authUrl).replace(/\/+$/, '')}/v1.0`;
    let res: Response;
    try {
      res = await fetch(url, {
        headers: { 'X-Auth-User': this.credentials.user, 'X-Auth-Key': this.credentials.password },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      await res.arrayBuffer();
    } catch (e) {
      throw new SwiftUnreachable(`The auth gateway is unreachable at ${url}: ${causeOf(e)}.`);
    }
    const token = res.headers.get('x-auth-token');
    if (res.status !== 200 || !token) {
      throw new SwiftUnreachable(
        `The auth gateway at ${url} refused the reseller user '${this.credentials.user}' (HTTP ${res.status}); check CAIRN_QUOTA_CREDENTIALS.`,
      );
    }
    return token;
  }

  /** A request on the account with the reseller token; one new login when Swift refuses the token. */
  async account(
    method: 'POST' | 'PUT' | 'HEAD',
    username: string,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    const url = `${(this.credentials.storage_url ?? this.storageUrl).replace(/\/+$/, '')}/${encodeURIComponent(swiftAccountOf(username))}`;
    for (let attempt = 0; ; attempt++) {
      this.token ??= await this.login();
      const res = await this.call(url, { method, headers: { ...headers, 'X-Auth-Token': this.token } });
      if (method !== 'HEAD') await res.arrayBuffer().catch(() => undefined);
      if (
        (res.status === 401 || res.status === 403) &&
        attempt === 0 &&
        res.headers.get('x-account-status')?.toLowerCase() !== 'deleted'
      ) {
        this.token = null;
        continue;
      }
      return res;
    }
  }
}

/** Why an account request failed, in one sentence. */
export function accountFailure(res: Response, username: string, method: string, user: string): string {
  const account = swiftAccountOf(username);
  if (res.headers.get('x-account-status')?.toLowerCase() === 'deleted' || (res.status === 403 && method === 'PUT')) {
    return `The Swift account ${account} was deleted and is not yet reaped; the quotas are applied once Swift has reaped it.`;
  }
  if (res.status === 405) {
    return `The Swift account ${account} does not exist, and this Swift neither creates accounts on first use (account_autocreate) nor lets a reseller create them (allow_account_management).`;
  }
  if (res.status === 401 || res.status === 403) {
    return `Swift refused the reseller token of '${user}' (HTTP ${res.status}): that storage user must be a superuser (ResellerAdmin) and the proxy's keystoneauth must accept it.`;
  }
  if (res.status === 400)
    return `Swift refused the quota headers (HTTP 400); is account_quotas after the auth middleware in the proxy pipeline?`;
  return `Swift answered HTTP ${res.status} to ${method} ${account}; retrying.`;
}
