import { connect, type Socket } from 'node:net';
import { REDIS_URL, startStack, type Stack } from '../support/stack';
import { spawnService, within, type ServiceProcess } from './support';

const PASSWORD = 'shutdown-password-0123456789';

/** Resolves with everything the server sent once it closes the connection. */
const readAll = (socket: Socket): Promise<string> =>
  new Promise((resolve, reject) => {
    let data = '';
    socket.on('data', (d: Buffer) => (data += d.toString()));
    socket.once('end', () => resolve(data));
    socket.once('error', reject);
  });

const connectionRefused = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED'));
  });

describe('the auth-gateway process on SIGTERM', () => {
  let stack: Stack;
  let gateway: ServiceProcess | undefined;
  beforeAll(async () => {
    stack = await startStack({ database: 'postgres' });
    await stack.createUser('shutdown-alice', PASSWORD);
  });
  afterAll(async () => {
    gateway?.kill();
    await stack.close();
  });

  it('when a login is in flight, then it completes with its normal 201, new connections are refused, and the process exits 0 within 10 s', async () => {
    gateway = spawnService('auth-gateway', {
      CAIRN_GATEWAY_HOST: '127.0.0.1',
      CAIRN_GATEWAY_PORT: '0',
      DATABASE_URL: stack.databaseUrl!,
      REDIS_URL,
    });
    const port = await within(gateway.listening, 60_000, 'gateway listening');

    // A V3 login whose body is only half sent: the request is in flight (headers parsed, handler
    // waiting) when the signal arrives.
    const body = JSON.stringify({
      auth: {
        identity: {
          methods: ['password'],
          password: { user: { name: 'shutdown-alice', domain: { id: 'default' }, password: PASSWORD } },
        },
      },
    });
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    const answer = readAll(socket);
    const half = Math.floor(body.length / 2);
    socket.write(
      `POST /auth/v3/auth/tokens HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body.slice(0, half)}`,
    );
    await new Promise((r) => setTimeout(r, 300));

    const signalledAt = Date.now();
    gateway.child.kill('SIGTERM');
    await within(
      (async () => {
        while (!gateway!.output().includes('shutting down')) await new Promise((r) => setTimeout(r, 20));
      })(),
      5_000,
      'shutting down logged',
    );
    // The listener closes right after that line: new connections are refused from then on.
    const refusedBy = Date.now() + 5_000;
    while (!(await connectionRefused(port))) {
      if (Date.now() > refusedBy) throw new Error('new connections still accepted 5 s after "shutting down"');
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(gateway.child.exitCode).toBeNull(); // still finishing the login

    socket.write(body.slice(half)); // not end(): a client's half-close aborts its request in Node
    const raw = await within(answer, 10_000, 'answer to the in-flight login');
    expect(raw).toMatch(/^HTTP\/1\.1 201 Created\r\n/);
    expect(raw).toMatch(/\r\nX-Subject-Token: \S+\r\n/i);
    expect(raw).toContain('"token"');

    const { code, at } = await within(gateway.exited, 10_000, 'exit');
    expect(code).toBe(0);
    expect(at - signalledAt).toBeLessThan(10_000);
  });
});
