import { readFileSync } from 'node:fs';
import * as net from 'node:net';

/**
 * Loopback ports for servers that a test names before they start (Swift's servers, memcached, a
 * gateway whose URL goes into a proxy's config), so the port cannot come from listen(0).
 *
 * Asking the kernel for a free port (listen(0), close, let the server bind it) races: between the
 * close and the bind the kernel may give the same port to another test file's listen(0) or to any
 * outgoing connection, since both come from the ephemeral range. These ports come from BELOW that
 * range (/proc/sys/net/ipv4/ip_local_port_range), which the kernel never hands out by itself, and
 * each jest worker (JEST_WORKER_ID) has a block of its own: only this worker gives out a port of
 * its block. Within the block a file starts at a random offset, so that two jest runs on one
 * machine (whose workers have the same ids) rarely meet, and every port is checked bindable first
 * (a port some daemon already holds is skipped).
 */
const FIRST_PORT = 10_000;
const BLOCK_SIZE = 1_000;
/**
 * The Fetch standard's "bad ports" at or above FIRST_PORT: fetch() (undici) refuses to connect to
 * them, so a Swift server given one would never answer the tests' health checks.
 */
const FETCH_BAD_PORTS = new Set([10_080]);

function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low >= FIRST_PORT + BLOCK_SIZE) return low;
  } catch {
    // not Linux: the IANA ephemeral range starts at 49152
  }
  return 49_152;
}

const blocks = Math.floor((ephemeralLow() - FIRST_PORT) / BLOCK_SIZE);
const worker = Math.max(1, Number(process.env.JEST_WORKER_ID) || 1);
const blockStart = FIRST_PORT + ((worker - 1) % blocks) * BLOCK_SIZE;
let next = Math.floor(Math.random() * BLOCK_SIZE);
/** Given out by this process: never twice, even before the server it was meant for binds it. */
const given = new Set<number>();

function bindable(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** `n` distinct ports of this worker's block that nothing listens on now (on `host`, default 127.0.0.1). */
export async function reservePorts(n: number, host = '127.0.0.1'): Promise<number[]> {
  const ports: number[] = [];
  for (let tried = 0; ports.length < n; tried++) {
    if (tried >= BLOCK_SIZE)
      throw new Error(`reservePorts: no ${n} free ports in ${blockStart}–${blockStart + BLOCK_SIZE - 1}`);
    const port = blockStart + (next++ % BLOCK_SIZE);
    if (given.has(port) || FETCH_BAD_PORTS.has(port) || !(await bindable(port, host))) continue;
    given.add(port);
    ports.push(port);
  }
  return ports;
}

/** One port, as reservePorts. */
export async function reservePort(host = '127.0.0.1'): Promise<number> {
  return (await reservePorts(1, host))[0]!;
}
