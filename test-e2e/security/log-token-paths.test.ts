import { request } from 'node:http';
import { startStack, type Stack } from '../support/stack';
import { login } from './client';

/**
 * Keystone V2 validation carries the token in its path. Every spelling of that path is sent to a
 * real gateway with a live token: those the router hands to the validation handler (proved by the
 * answer, which names the token), and those it does not (the token in them is live all the same).
 * No log line may hold the token or any 12 characters of it.
 */
const PASSWORD = 'alice-password-long-enough-1';
const SVC_PASSWORD = 'svc-password-long-enough-12';

/** One GET with the path sent byte for byte (fetch and URL would normalise `..`, `//` and escapes). */
function rawGet(
  base: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; text: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, method: 'GET', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const encodeLetters = (text: string, which: RegExp) =>
  text.replace(which, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** Spellings express's router hands to `GET /v2.0/tokens/:token` (each must answer with the token). */
const routed = (t: string): Record<string, string> => ({
  'as documented': `/auth/v2.0/tokens/${t}`,
  'in capitals': `/AUTH/V2.0/TOKENS/${t}`,
  'in mixed case': `/auth/v2.0/Tokens/${t}`,
  'with a trailing slash': `/auth/v2.0/tokens/${t}/`,
  'with a query string': `/auth/v2.0/tokens/${t}?x=1`,
  'with percent-encoded letters in the token': `/auth/v2.0/tokens/${encodeLetters(t, /[a-f]/g)}`,
  'with every character of the token percent-encoded': `/auth/v2.0/tokens/${encodeLetters(t, /./g)}`,
  'in capitals with percent-encoded letters': `/AUTH/v2.0/TOKENS/${encodeLetters(t, /e/g)}/`,
});

/** Spellings that name the token but that no route takes (404); the token in them is still live. */
const notRouted = (t: string): Record<string, string> => ({
  'with a semicolon': `/auth/v2.0/tokens;${t}`,
  'with %2F': `/auth/v2.0/tokens%2F${t}`,
  'with %2f': `/auth/v2.0/tokens%2f${t}`,
  'with a doubled slash before the token': `/auth/v2.0/tokens//${t}`,
  'with a doubled slash before tokens': `/auth/v2.0//tokens/${t}`,
  'with a doubled leading slash': `//auth/v2.0/tokens/${t}`,
  'with a dot-dot segment': `/auth/v2.0/x/../tokens/${t}`,
  'with a dot segment': `/auth/v2.0/tokens/./${t}`,
  'with percent-encoded letters in tokens': `/auth/v2.0/%74%6F%6B%65%6E%73/${t}`,
  'with percent-encoded letters in v2.0': `/auth/%76%32%2E%30/tokens/${t}`,
  'with backslashes': `/auth/v2.0\\tokens\\${t}`,
  'with more after the token': `/auth/v2.0/tokens/${t}/endpoints`,
  'with an escape encoded twice': `/auth/v2.0/tokens/${encodeLetters(t, /e/g).replace(/%/g, '%25')}`,
});

describe('a live token in any spelling of the V2 validation path', () => {
  let stack: Stack;
  let token: string;
  let serviceToken: string;

  beforeAll(async () => {
    stack = await startStack();
    await stack.createUser('alice', PASSWORD);
    await stack.createUser('svc', SVC_PASSWORD, { is_superuser: true });
    token = String((await login(stack.gatewayUrl, 'v1', 'alice', PASSWORD)).headers['x-auth-token']);
    serviceToken = String((await login(stack.gatewayUrl, 'v1', 'svc', SVC_PASSWORD)).headers['x-auth-token']);
    expect(token).toMatch(/^eyJ/);
  });
  afterAll(() => stack?.close());

  const requestLines = () =>
    stack.gatewayLogs.lines
      .map((l) => JSON.parse(l) as { req?: { url?: string } })
      .filter((l) => l.req?.url !== undefined);

  const expectNoTokenInLogs = () => {
    const text = stack.gatewayLogs.text;
    const secret = [
      token.split('.')[2]!,
      (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { jti: string }).jti,
    ];
    for (const part of secret)
      for (let i = 0; i + 12 <= part.length; i++) expect(text).not.toContain(part.slice(i, i + 12));
  };

  it('when each spelling the router accepts is sent, then it reaches the validation handler, and is logged only as /auth/v2.0/tokens/[token]', async () => {
    for (const [what, path] of Object.entries(routed(token))) {
      const before = requestLines().length;
      const answer = await rawGet(stack.gatewayUrl, path, { 'X-Auth-Token': serviceToken });
      // The handler answered: the access document names the very token.
      expect({ what, status: answer.status }).toEqual({ what, status: 200 });
      expect((JSON.parse(answer.text) as { access: { token: { id: string } } }).access.token.id).toBe(token);
      const lines = requestLines().slice(before);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines)
        expect({ what, url: line.req?.url }).toEqual({ what, url: '/auth/v2.0/tokens/[token]' });
    }
    expectNoTokenInLogs();
  });

  it('when spellings no route takes carry the token, then they are answered 404, and no log line holds the token either', async () => {
    for (const [what, path] of Object.entries(notRouted(token))) {
      const before = requestLines().length;
      const answer = await rawGet(stack.gatewayUrl, path, { 'X-Auth-Token': serviceToken });
      expect({ what, status: answer.status }).toEqual({ what, status: 404 });
      const lines = requestLines().slice(before);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(line.req?.url).toContain('[token]');
    }
    expectNoTokenInLogs();
  });

  it('when the token path holds an escape the router cannot decode, then it is answered 400, and logged without the token', async () => {
    const before = requestLines().length;
    const answer = await rawGet(stack.gatewayUrl, `/auth/v2.0/tokens/%ZZ${token}`, { 'X-Auth-Token': serviceToken });
    expect(answer.status).toBe(400);
    const lines = requestLines().slice(before);
    expect(lines.length).toBeGreaterThan(0);
    expectNoTokenInLogs();
  });
});
