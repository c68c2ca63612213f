import { spawn } from 'node:child_process';
import { join } from 'node:path';
import request from 'supertest';
import { closeRedis, createDeps, startAuthGateway, type RunningGateway } from '../src';
import { startTestGateway, TEST_CONFIG } from './helpers';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('auth-gateway over HTTP', () => {
  let gw: RunningGateway;
  let url: string;
  let logs: Awaited<ReturnType<typeof startTestGateway>>['logs'];
  beforeAll(async () => {
    ({ gw, url, logs } = await startTestGateway());
  });
  afterAll(() => gw.close());

  it('when /healthz is fetched, then it answers 200 {"status":"ok"}', async () => {
    const res = await request(url).get('/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('when a path is unknown, then the answer is 404 in Keystone\'s error shape', async () => {
    for (const path of ['/', '/nope', '/auth/v2.0', '/auth/v3/nope', '/healthz/extra']) {
      const res = await request(url).get(path);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual({ error: { code: 404, title: 'Not Found', message: 'The resource could not be found.' } });
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
    expect(logs.text).toContain('"url":"/auth/v3"');
    expect(logs.text).not.toMatch(/secret/);
  });
});

describe('createDeps with Redis', () => {
  it('when REDIS_URL is unset, then there is no Redis client', () => {
    expect(createDeps({ ...TEST_CONFIG, logLevel: 'silent' }).redis).toBeUndefined();
  });

  it('when REDIS_URL is set, then the client connects on first use and close() ends it', async () => {
    const deps = createDeps({ ...TEST_CONFIG, logLevel: 'silent', redisUrl: REDIS_URL });
    const gw = await startAuthGateway({ ...TEST_CONFIG, redisUrl: REDIS_URL }, deps);
    expect(deps.redis!.status).toBe('wait');
    await expect(deps.redis!.ping()).resolves.toBe('PONG');
    await gw.close();
    expect(deps.redis!.status).toBe('end');
  });

  it('when Redis cannot be reached, then a command fails after a few retries and close() stops reconnecting', async () => {
    const deps = createDeps({ ...TEST_CONFIG, logLevel: 'silent', redisUrl: 'redis://127.0.0.1:1' });
    const started = Date.now();
    await expect(deps.redis!.ping()).rejects.toThrow(/max retries per request/);
    expect(Date.now() - started).toBeLessThan(5_000);
    await closeRedis(deps.redis!);
    let attempts = 0;
    deps.redis!.on('close', () => attempts++);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(attempts).toBe(0);
  }, 10_000);

  it('when a client that never connected is closed, then it ends at once', async () => {
    const deps = createDeps({ ...TEST_CONFIG, logLevel: 'silent', redisUrl: REDIS_URL });
    const started = Date.now();
    await closeRedis(deps.redis!, 10_000);
    expect(deps.redis!.status).toBe('end');
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

describe('the auth-gateway process', () => {
  const tsx = join(__dirname, '..', 'node_modules', '.bin', 'tsx');
  const server = join(__dirname, '..', 'src', 'server.ts');

  function run(env: Record<string, string>) {
    const child = spawn(tsx, [server], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    return { child, exited, out: () => stdout, err: () => stderr };
  }

  it('when it gets SIGTERM, then it stops listening and exits 0', async () => {
    const p = run({ CAIRN_GATEWAY_HOST: '127.0.0.1', CAIRN_GATEWAY_PORT: '0', LOG_LEVEL: 'info' });
    try {
      const port = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`not listening: ${p.out()}${p.err()}`)), 20_000);
        p.child.stdout.on('data', () => {
          const line = p.out().split('\n').find((l) => l.includes('auth-gateway listening'));
          if (line) {
            clearTimeout(timer);
            resolve((JSON.parse(line) as { port: number }).port);
          }
        });
      });
      expect((await request(`http://127.0.0.1:${port}`).get('/healthz')).body).toEqual({ status: 'ok' });
      p.child.kill('SIGTERM');
      expect(await p.exited).toBe(0);
      expect(p.out()).toContain('shutting down');
    } finally {
      if (p.child.exitCode === null) p.child.kill('SIGKILL');
    }
  }, 30_000);

  it('when the configuration is invalid, then it exits 1 naming the variable', async () => {
    const p = run({ CAIRN_GATEWAY_PORT: 'http' });
    expect(await p.exited).toBe(1);
    expect(p.err()).toContain('CAIRN_GATEWAY_PORT="http"');
  }, 30_000);
});
