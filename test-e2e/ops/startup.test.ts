import { randomBytes } from 'node:crypto';
import knex from 'knex';
import { ADMIN_AUTH, POSTGRES_ADMIN_URL, REDIS_URL, startStack, type Stack } from '../support/stack';
import { freePort, spawnService, TcpRelay, within, type ServiceProcess } from './support';

/** A password in every DATABASE_URL here (trust authentication ignores it): it must never be logged. */
const DB_PASSWORD = 'startup-db-password-42';
const withPassword = (url: string, port: number) => {
  const u = new URL(url);
  u.password = DB_PASSWORD;
  u.port = String(port);
  return u.toString();
};
const ready = async (port: number) => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200;
const retryWarnings = (p: ServiceProcess, step: string) =>
  p.logLines().filter((l) => l.step === step && l.msg === `${step}: not available yet, retrying`);
/** Waits (the process has to start first: tsx takes seconds) until `step` has failed `n` times. */
async function failures(p: ServiceProcess, step: string, n: number): Promise<Array<Record<string, unknown>>> {
  const until = Date.now() + 30_000;
  while (retryWarnings(p, step).length < n) {
    if (p.child.exitCode !== null || Date.now() > until) throw new Error(`no ${n} retries of ${step}:\n${p.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return retryWarnings(p, step);
}

describe('start-up retries of the auth-gateway', () => {
  let stack: Stack;
  const started: ServiceProcess[] = [];
  const relays: TcpRelay[] = [];
  beforeAll(async () => {
    stack = await startStack({ database: 'postgres' });
  });
  afterAll(async () => {
    for (const p of started) p.kill();
    for (const r of relays) await r.stop();
    await stack.close();
  });
  const gateway = (env: Record<string, string>) => {
    const p = spawnService('auth-gateway', {
      CAIRN_GATEWAY_HOST: '127.0.0.1',
      CAIRN_GATEWAY_PORT: '0',
      REDIS_URL,
      ...env,
    });
    started.push(p);
    return p;
  };

  it('when Postgres is not listening yet at start, then it retries, logging each failure without the password, and is ready once Postgres comes', async () => {
    const relay = await TcpRelay.to(5432);
    relays.push(relay);
    const p = gateway({ DATABASE_URL: withPassword(stack.databaseUrl!, relay.port) });
    await failures(p, 'cluster lookup in Postgres', 3);
    await relay.start();
    const port = await within(p.listening, 15_000, 'listening after Postgres came');
    expect(await ready(port)).toBe(true);
    expect(p.output()).toContain('ECONNREFUSED');
    expect(p.output()).not.toContain(DB_PASSWORD);
  });

  it('when its cluster row does not exist yet (the migrate job has not run), then it waits for it and serves that cluster', async () => {
    const p = gateway({ DATABASE_URL: stack.databaseUrl!, CAIRN_GATEWAY_CLUSTER: 'late-cluster' });
    expect((await failures(p, 'cluster lookup in Postgres', 2)).at(-1)?.err).toMatchObject({
      message: expect.stringContaining("no cluster with id, uuid or name 'late-cluster'"),
    });
    const res = await fetch(`${stack.apiUrl}/api/v1/clusters/`, {
      method: 'POST',
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        name: 'late-cluster',
        auth_url: 'https://late.example.com/auth',
        storage_url: 'https://late.example.com/v1',
      }),
    });
    expect(res.status).toBe(201);
    const port = await within(p.listening, 15_000, 'listening after the cluster row appeared');
    const discovery = await fetch(`http://127.0.0.1:${port}/auth/v3`);
    expect(((await discovery.json()) as { version: { links: Array<{ href: string }> } }).version.links[0]!.href).toBe(
      'https://late.example.com/auth/v3/',
    );
  });

  it('when Postgres stays away past CAIRN_STARTUP_TIMEOUT, then it exits 1 with the cause and no password', async () => {
    const p = gateway({ DATABASE_URL: withPassword(stack.databaseUrl!, await freePort()), CAIRN_STARTUP_TIMEOUT: '2' });
    const started = Date.now();
    const { code, at } = await within(p.exited, 20_000, 'exit');
    expect(code).toBe(1);
    expect(at - started).toBeGreaterThanOrEqual(2000);
    expect(p.output()).toMatch(/ECONNREFUSED/);
    expect(p.output()).toContain('giving up');
    expect(p.output()).not.toContain(DB_PASSWORD);
  });
});

describe('start-up retries of the management-api', () => {
  const name = `cairn_ops_startup_${process.pid}_${randomBytes(3).toString('hex')}`;
  const admin = knex({ client: 'pg', connection: POSTGRES_ADMIN_URL, pool: { min: 0, max: 1 } });
  let relay: TcpRelay;
  let p: ServiceProcess | undefined;
  beforeAll(async () => {
    await admin.raw(`CREATE DATABASE ${name}`);
    relay = await TcpRelay.to(5432);
  });
  afterAll(async () => {
    p?.kill();
    await relay.stop();
    await admin.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.destroy();
  });

  it('when Postgres is not listening yet at start, then it retries, then migrates, bootstraps and becomes ready once Postgres comes', async () => {
    const url = new URL(POSTGRES_ADMIN_URL);
    url.pathname = `/${name}`;
    p = spawnService('management-api', {
      CAIRN_API_HOST: '127.0.0.1',
      CAIRN_API_PORT: '0',
      DATABASE_URL: withPassword(url.toString(), relay.port),
      CAIRN_ADMIN_USER: 'root',
      CAIRN_ADMIN_KEY: 'startup-admin-key-0123456789abcdefghijklmn',
    });
    await failures(p, 'database preparation', 3);
    await relay.start();
    const port = await within(p.listening, 20_000, 'listening after Postgres came');
    expect(await ready(port)).toBe(true);
    const clusters = await fetch(`http://127.0.0.1:${port}/api/v1/clusters/`, {
      headers: { Authorization: 'ApiKey root:startup-admin-key-0123456789abcdefghijklmn' },
    });
    expect(clusters.status).toBe(200);
    expect(p.output()).not.toContain(DB_PASSWORD);
  });
});
