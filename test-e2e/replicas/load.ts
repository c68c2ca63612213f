/**
 * A steady load for the failover test: a few concurrent clients creating users and reading lists
 * through the load balancer's management-API route, and logging in and validating tokens through
 * its gateway route. Every answer is recorded (status, which replica answered, when), and so is
 * every request that got no HTTP answer at all.
 */
import { apiCall, v1Login, v3Login, validate } from './client';

export interface Outcome {
  kind: 'create' | 'list' | 'login-v1' | 'login-v3' | 'validate';
  /** HTTP status, or 0 when the request failed below HTTP (connection refused/reset, deadline). */
  status: number;
  /** Milliseconds since the load started, when the answer arrived. */
  at: number;
  /** nginx's $upstream_addr: the replica(s) tried, "a, b" when it failed over. */
  upstream: string;
  /** The user name a create asked for. */
  user?: string;
  error?: string;
}

export interface LoadOptions {
  lb: string;
  adminAuth: string;
  clusterUri: string;
  password: string;
  /** Names of the users the writers create: <prefix>-<writer>-<n>. */
  prefix: string;
  /** A user (normal) every gateway client logs in as, and the Swift proxy's service token. */
  loginUser: string;
  serviceToken: string;
  writers: number;
  readers: number;
  gatewayClients: number;
  durationMs: number;
  /** Called once at `atMs` into the load (the fault). */
  fault: { atMs: number; run: () => Promise<void> };
}

export interface LoadResult {
  outcomes: Outcome[];
  faultAt: number;
  /** Tokens handed out during the load, to re-validate afterwards. */
  tokens: string[];
}

export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const start = Date.now();
  const now = () => Date.now() - start;
  const until = start + o.durationMs;
  const outcomes: Outcome[] = [];
  const tokens: string[] = [];
  let faultAt = -1;

  const record = async <T extends { status: number; headers: Headers }>(
    kind: Outcome['kind'],
    user: string | undefined,
    call: () => Promise<T>,
  ): Promise<T | undefined> => {
    try {
      const res = await call();
      outcomes.push({
        kind,
        status: res.status,
        at: now(),
        upstream: res.headers.get('x-upstream-addr') ?? '',
        ...(user ? { user } : {}),
      });
      return res;
    } catch (e) {
      const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : '';
      outcomes.push({
        kind,
        status: 0,
        at: now(),
        upstream: '',
        ...(user ? { user } : {}),
        error: `${e instanceof Error ? e.message : String(e)}${cause}`,
      });
      return undefined;
    }
  };

  const writer = async (w: number) => {
    for (let i = 0; Date.now() < until; i++) {
      const user = `${o.prefix}-${w}-${i}`;
      await record('create', user, () =>
        apiCall(o.lb, o.adminAuth, 'POST', '/api/v1/users/', { cluster: o.clusterUri, user, password: o.password }),
      );
    }
  };
  const reader = async () => {
    while (Date.now() < until)
      await record('list', undefined, () => apiCall(o.lb, o.adminAuth, 'GET', '/api/v1/users/?limit=5'));
  };
  const gatewayClient = async () => {
    for (let i = 0; Date.now() < until; i++) {
      // V1 (GET) and V3 (POST) logins alternate: the POST exercises the `non_idempotent` retry.
      const login = await record(i % 2 ? 'login-v3' : 'login-v1', undefined, () =>
        i % 2 ? v3Login(o.lb, o.loginUser, o.password) : v1Login(o.lb, o.loginUser, o.password),
      );
      if (login?.token) {
        tokens.push(login.token);
        await record('validate', undefined, () => validate(o.lb, o.serviceToken, login.token!));
      }
    }
  };
  const fault = (async () => {
    await new Promise((r) => setTimeout(r, o.fault.atMs));
    faultAt = now();
    await o.fault.run();
  })();

  await Promise.all([
    ...Array.from({ length: o.writers }, (_, w) => writer(w)),
    ...Array.from({ length: o.readers }, () => reader()),
    ...Array.from({ length: o.gatewayClients }, () => gatewayClient()),
    fault,
  ]);
  return { outcomes, faultAt, tokens };
}
