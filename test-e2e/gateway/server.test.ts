import { spawn } from 'node:child_process';
import request from 'supertest';
import { CAIRN_VERSION } from '@cairn/runtime';
import { nodeCommand } from '../support/processes';
import { startStack, type Stack } from '../support/stack';

describe('auth-gateway over HTTP', () => {
  let stack: Stack;
  let url: string;
  beforeAll(async () => {
    stack = await startStack({ database: 'pglite' });
    url = stack.gatewayUrl;
  });
  afterAll(() => stack.close());

  it('when /healthz is fetched, then it answers 200 {"status":"ok"} with the version', async () => {
    const res = await request(url).get('/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', version: CAIRN_VERSION });
  });

  it("when a path is unknown, then the answer is 404 in Keystone's error shape", async () => {
    for (const path of ['/', '/nope', '/auth/v2.0/nope', '/auth/v3/nope', '/healthz/extra']) {
      const res = await request(url).get(path);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual({
        error: { code: 404, title: 'Not Found', message: 'The resource could not be found.' },
      });
    }
  });

  it('when any request is answered, then it carries a Keystone request id and Vary: X-Auth-Token', async () => {
    const res = await request(url).get('/auth/v3');
    expect(res.headers['x-openstack-request-id']).toMatch(/^req-[0-9a-f-]{36}$/);
    expect(res.headers.vary).toBe('X-Auth-Token');
    const echoed = await request(url).get('/nope').set('x-openstack-request-id', 'req-from-the-proxy-1');
    expect(echoed.headers['x-openstack-request-id']).toBe('req-from-the-proxy-1');
  });

  it('when a request carries credentials and tokens, then no log line contains them', async () => {
    await request(url)
      .get('/auth/v3')
      .set('Authorization', 'Basic c2VjcmV0LWJhc2lj')
      .set('X-Auth-Key', 'secret-auth-key')
      .set('X-Auth-Token', 'secret-auth-token')
      .set('X-Subject-Token', 'secret-subject-token')
      .set('X-Storage-Pass', 'secret-storage-pass');
    expect(stack.gatewayLogs.text).toContain('"url":"/auth/v3"');
    expect(stack.gatewayLogs.text).not.toMatch(/secret/);
  });
});

describe('the auth-gateway process', () => {
  const [node, serverArgs] = nodeCommand('services/auth-gateway/src/server.ts');
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ database: 'postgres' });
  });
  afterAll(() => stack.close());

  function run(env: Record<string, string>) {
    const child = spawn(node, serverArgs, {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    return { child, exited, out: () => stdout, err: () => stderr };
  }

  it('when it gets SIGTERM, then it stops listening and exits 0', async () => {
    const p = run({
      CAIRN_GATEWAY_HOST: '127.0.0.1',
      CAIRN_GATEWAY_PORT: '0',
      LOG_LEVEL: 'info',
      DATABASE_URL: stack.databaseUrl!,
      REDIS_URL: 'redis://127.0.0.1:6379',
    });
    try {
      const port = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`not listening: ${p.out()}${p.err()}`)), 30_000);
        p.child.stdout.on('data', () => {
          const line = p
            .out()
            .split('\n')
            .find((l) => l.includes('auth-gateway listening'));
          if (line) {
            clearTimeout(timer);
            resolve((JSON.parse(line) as { port: number }).port);
          }
        });
      });
      expect((await request(`http://127.0.0.1:${port}`).get('/healthz')).body).toEqual({
        status: 'ok',
        version: CAIRN_VERSION,
      });
      expect(p.out()).not.toContain('postgres://');
      p.child.kill('SIGTERM');
      expect(await p.exited).toBe(0);
      expect(p.out()).toContain('shutting down');
    } finally {
      if (p.child.exitCode === null) p.child.kill('SIGKILL');
    }
  });

  it('when the configuration is invalid, then it exits 1 naming the variable', async () => {
    const p = run({ CAIRN_GATEWAY_PORT: 'http' });
    expect(await p.exited).toBe(1);
    expect(p.err()).toContain('CAIRN_GATEWAY_PORT="http"');
  });

  it('when DATABASE_URL is missing, then it exits 1 saying the gateway needs it', async () => {
    const p = run({ CAIRN_GATEWAY_PORT: '0' });
    expect(await p.exited).toBe(1);
    expect(p.err()).toContain('DATABASE_URL is required');
  });

  it('when the configured cluster does not exist, then it exits 1 naming it', async () => {
    // A missing row is retried (the migrate job may not have made it yet) until CAIRN_STARTUP_TIMEOUT.
    const p = run({
      CAIRN_GATEWAY_PORT: '0',
      DATABASE_URL: stack.databaseUrl!,
      CAIRN_GATEWAY_CLUSTER: 'atlantis',
      CAIRN_STARTUP_TIMEOUT: '1',
    });
    expect(await p.exited).toBe(1);
    expect(p.err()).toContain("no cluster with id, uuid or name 'atlantis'");
  });
});
