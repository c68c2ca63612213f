import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for a Swift proxy and the cluster's auth gateway, over real HTTP on port 0, for the
 * quota reconciler's integration tests (the real Swift proxy is in test-e2e/interop/quotas.test.ts).
 * It keeps each account's `X-Account-*` headers as a reseller POST or PUT leaves them (an empty
 * value removes one, as Swift does) and shows them on HEAD.
 */
export interface StandInState {
  version: string;
  accountQuotas: boolean;
  /** Accounts a POST does not create (no account_autocreate): the reconciler must PUT them. */
  autocreate: boolean;
  /** Refuse every connection (Swift down). */
  down: boolean;
  /** Account names deleted in Swift and not yet reaped. */
  deleted: Set<string>;
  accounts: Map<string, Map<string, string>>;
  /** Method and account of every account request. */
  requests: Array<{ method: string; account: string; headers: Record<string, string> }>;
  user: string;
  password: string;
}

export interface StandInSwift {
  state: StandInState;
  /** `http://127.0.0.1:<port>/v1`, as a cluster's storage_url. */
  storageUrl: string;
  /** `http://127.0.0.1:<port>/auth`, as a cluster's auth_url. */
  authUrl: string;
  close(): Promise<void>;
}

const TOKEN = 'stand-in-reseller-token';

export async function startStandInSwift(initial: Partial<StandInState> = {}): Promise<StandInSwift> {
  const state: StandInState = {
    version: '2.30.1',
    accountQuotas: true,
    autocreate: false,
    down: false,
    deleted: new Set(),
    accounts: new Map(),
    requests: [],
    user: 'reseller',
    password: 'reseller-password-000001',
    ...initial,
  };
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    if (state.down) return void req.socket.destroy();
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/info') {
      res.setHeader('Content-Type', 'application/json');
      const info: Record<string, unknown> = {
        swift: { version: state.version, policies: [{ name: 'gold', default: true }, { name: 'Silver' }] },
      };
      if (state.accountQuotas) info.account_quotas = {};
      return void res.end(JSON.stringify(info));
    }
    if (url.pathname === '/auth/v1.0') {
      const ok = req.headers['x-auth-user'] === state.user && req.headers['x-auth-key'] === state.password;
      res.writeHead(ok ? 200 : 401, ok ? { 'X-Auth-Token': TOKEN, 'X-Storage-Url': 'unused' } : {});
      return void res.end();
    }
    const m = /^\/v1\/([^/]+)$/.exec(url.pathname);
    if (!m) return void res.writeHead(404).end();
    const account = decodeURIComponent(m[1]!);
    const headers = Object.fromEntries(
      Object.entries(req.headers)
        .filter(([k]) => k.startsWith('x-account-'))
        .map(([k, v]) => [k, String(v)]),
    );
    state.requests.push({ method: req.method ?? '', account, headers });
    if (req.headers['x-auth-token'] !== TOKEN) return void res.writeHead(401).end();
    if (state.deleted.has(account))
      return void res.writeHead(req.method === 'PUT' ? 403 : 404, { 'X-Account-Status': 'Deleted' }).end();
    let stored = state.accounts.get(account);
    if (!stored && (req.method === 'PUT' || (req.method === 'POST' && state.autocreate))) {
      stored = new Map();
      state.accounts.set(account, stored);
    }
    if (!stored) return void res.writeHead(404).end();
    if (req.method === 'HEAD') {
      res.writeHead(204, Object.fromEntries(stored));
      return void res.end();
    }
    for (const [k, v] of Object.entries(headers)) {
      if (v === '') stored.delete(k);
      else stored.set(k, v);
    }
    res.writeHead(req.method === 'PUT' ? 201 : 204).end();
  };
  const server: Server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    state,
    storageUrl: `${base}/v1`,
    authUrl: `${base}/auth`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
