import { createServer, type Server, type Socket } from 'node:net';
import type { HostileContext } from './arbitraries';

/**
 * The fixtures the hostile generators aim at, made through the public API as a client would: a
 * reader operator, users that exist, gateway tokens, and a TCP "trap" that external XML entities
 * point at (it counts connections; any connection means something fetched an entity).
 */

export interface Trap {
  url: string;
  /** Connections received so far, with the first bytes each sent. */
  connections: string[];
  close: () => Promise<void>;
}

export function startTrap(): Promise<Trap> {
  const connections: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    const index = connections.push('') - 1;
    socket.on('data', (d) => {
      if (connections[index]!.length < 200) connections[index] += d.toString('latin1').slice(0, 200);
    });
    socket.on('close', () => sockets.delete(socket));
    socket.end();
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      resolve({
        url: `http://127.0.0.1:${port}`,
        connections,
        close: () =>
          new Promise<void>((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

async function call(
  url: string,
  init: { method: string; headers?: Record<string, string>; body?: unknown },
): Promise<{ status: number; body: unknown; headers: Headers }> {
  const res = await fetch(url, {
    method: init.method,
    headers: { 'Content-Type': 'application/json', ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, body, headers: res.headers };
}

export const LOGIN_PASSWORD = 'hostile-login-password-0123456789';

/** Creates the fixtures; `tag` keeps names apart when several runs share a database. */
export async function prepareContext(
  apiUrl: string,
  gatewayUrl: string,
  adminAuth: string,
  trapUrl: string,
  tag = 'h',
): Promise<HostileContext> {
  const admin = { Authorization: adminAuth };
  const expect = (what: string, res: { status: number; body: unknown }, status: number) => {
    if (res.status !== status) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Record<string, unknown>;
  };
  const reader = expect(
    'create reader',
    await call(`${apiUrl}/api/v1/operators/`, {
      method: 'POST',
      headers: admin,
      body: { name: `${tag}-reader`, role: 'reader' },
    }),
    201,
  );
  const userIds: string[] = [];
  const loginUser = `${tag}-login`;
  const superUser = `${tag}-super`;
  for (const [user, extra] of [
    [loginUser, {}],
    [superUser, { is_superuser: true }],
    [`${tag}-disabled`, { enabled: false }],
  ] as const) {
    const created = expect(
      `create ${user}`,
      await call(`${apiUrl}/api/v1/users/`, {
        method: 'POST',
        headers: admin,
        body: { cluster: '/api/v1/clusters/1/', user, password: LOGIN_PASSWORD, ...extra },
      }),
      201,
    );
    userIds.push(String(created.id));
  }
  const operators = expect(
    'list operators',
    await call(`${apiUrl}/api/v1/operators/`, { method: 'GET', headers: admin }),
    200,
  );
  const operatorIds = (operators.objects as Array<{ id: number }>).map((o) => o.id);
  const keys = expect(
    'list keys',
    await call(`${apiUrl}/api/v1/operators/${operatorIds[0]}/keys/`, { method: 'GET', headers: admin }),
    200,
  );
  const keyIds = (keys.objects as Array<{ id: string }>).map((k) => String(k.id));

  const token = async (user: string) => {
    const res = await call(`${gatewayUrl}/auth/v3/auth/tokens`, {
      method: 'POST',
      body: {
        auth: {
          identity: {
            methods: ['password'],
            password: { user: { name: user, domain: { id: 'default' }, password: LOGIN_PASSWORD } },
          },
        },
      },
    });
    expect(`token for ${user}`, res, 201);
    return res.headers.get('x-subject-token')!;
  };
  return {
    adminAuth,
    readerAuth: `ApiKey ${reader.name}:${reader.api_key}`,
    userIds,
    clusterIds: [1],
    operatorIds,
    keyIds,
    loginUser,
    loginPassword: LOGIN_PASSWORD,
    superToken: await token(superUser),
    userToken: await token(loginUser),
    trapUrl,
  };
}
