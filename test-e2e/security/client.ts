import { request } from 'node:http';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export interface Call {
  method?: string;
  headers?: Record<string, string>;
  body?: unknown;
  /**
   * The client's own address. Every 127.x.y.z is the loopback interface on Linux, so a test can
   * act as many different clients against a server on 127.0.0.1.
   */
  from?: string;
}

/** One HTTP request from a chosen source address (fetch and supertest cannot choose it). */
export function send(baseUrl: string, path: string, call: Call = {}): Promise<Answer> {
  const url = new URL(path, baseUrl);
  const body = call.body === undefined ? undefined : JSON.stringify(call.body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: call.method ?? 'GET',
        ...(call.from ? { localAddress: call.from } : {}),
        agent: false,
        headers: { ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...call.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export const v3Body = (name: string, password: string) => ({
  auth: { identity: { methods: ['password'], password: { user: { name, domain: { id: 'default' }, password } } } },
});

export const v2Body = (username: string, password: string) => ({
  auth: { passwordCredentials: { username, password } },
});

export type Api = 'v1' | 'v2' | 'v3';

/** A login through one of the three auth APIs. */
export function login(
  baseUrl: string,
  api: Api,
  user: string,
  password: string,
  call: Omit<Call, 'body' | 'method'> = {},
): Promise<Answer> {
  if (api === 'v1')
    return send(baseUrl, '/auth/v1.0', {
      ...call,
      headers: { ...call.headers, 'X-Auth-User': user, 'X-Auth-Key': password },
    });
  if (api === 'v2')
    return send(baseUrl, '/auth/v2.0/tokens', { ...call, method: 'POST', body: v2Body(user, password) });
  return send(baseUrl, '/auth/v3/auth/tokens', { ...call, method: 'POST', body: v3Body(user, password) });
}

/** The status a successful login answers with, per API. */
export const OK: Record<Api, number> = { v1: 200, v2: 200, v3: 201 };

/** The token a successful login handed out. */
export function tokenOf(api: Api, answer: Answer): string {
  if (api === 'v1') return answer.headers['x-auth-token'] as string;
  if (api === 'v3') return answer.headers['x-subject-token'] as string;
  return (JSON.parse(answer.text) as { access: { token: { id: string } } }).access.token.id;
}
