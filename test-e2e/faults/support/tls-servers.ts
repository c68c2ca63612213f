import { execFile, spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { workerPort } from './ports';

const run = promisify(execFile);

/** Ports of the TLS-only Postgres and Redis the TLS tests start (beside the faults suite's 5433 and 6390). */
export const TLS_PG_PORT = workerPort(process.env.CAIRN_TLS_PG_PORT, 5434);
export const TLS_REDIS_PORT = workerPort(process.env.CAIRN_TLS_REDIS_PORT, 6391);

export interface TestCa {
  dir: string;
  /** The CA that signed the servers' certificates. */
  caFile: string;
  /** Another CA, which signed nothing the servers show. */
  wrongCaFile: string;
  certFile: string;
  keyFile: string;
}

/**
 * A CA made now with openssl, and a server certificate it signs for 127.0.0.1 (an IP SAN: what
 * verify-full and Node check against the URL's host), plus an unrelated CA for the refusals.
 */
export async function makeTestCa(): Promise<TestCa> {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-tls-'));
  const p = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => run('openssl', args, { cwd: dir });
  for (const ca of ['ca', 'wrong-ca']) {
    await openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      `/CN=Cairn test ${ca}`,
      '-keyout',
      p(`${ca}.key`),
      '-out',
      p(`${ca}.pem`),
    );
  }
  await openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    p('server.key'),
    '-out',
    p('server.csr'),
  );
  writeFileSync(p('server.ext'), 'subjectAltName = IP:127.0.0.1\nextendedKeyUsage = serverAuth\n');
  await openssl(
    'x509',
    '-req',
    '-in',
    p('server.csr'),
    '-CA',
    p('ca.pem'),
    '-CAkey',
    p('ca.key'),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    p('server.ext'),
    '-out',
    p('server.pem'),
  );
  return {
    dir,
    caFile: p('ca.pem'),
    wrongCaFile: p('wrong-ca.pem'),
    certFile: p('server.pem'),
    keyFile: p('server.key'),
  };
}

function pgBin(tool: string): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => /^\d+$/.test(v)) : [];
  if (versions.length === 0)
    throw new Error('No Debian Postgres binaries under /usr/lib/postgresql: install postgresql (see .ci/run).');
  return join(root, versions.sort((a, b) => Number(a) - Number(b)).at(-1)!, 'bin', tool);
}

/** Runs a Postgres tool as the postgres user when we are root (initdb and postgres refuse root). */
function asPostgres(tool: string, args: string[]) {
  return process.getuid?.() === 0
    ? run('runuser', ['-u', 'postgres', '--', pgBin(tool), ...args])
    : run(pgBin(tool), args);
}

/**
 * A Postgres instance of our own in a temporary directory, on 127.0.0.1 only, that accepts TLS
 * connections only (pg_hba: hostssl), with the test CA's server certificate.
 */
export class TlsPostgres {
  readonly dir = mkdtempSync(join(tmpdir(), 'cairn-tls-pg-'));
  constructor(private readonly ca: TestCa) {}

  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${TLS_PG_PORT}/${database}`;
  }

  async start(): Promise<void> {
    const data = join(this.dir, 'data');
    // Copies the postgres user can read; the key private to its owner, as postgres requires.
    const key = join(this.dir, 'server.key');
    const cert = join(this.dir, 'server.pem');
    writeFileSync(key, readFileSync(this.ca.keyFile), { mode: 0o600 });
    writeFileSync(cert, readFileSync(this.ca.certFile));
    if (process.getuid?.() === 0) {
      const uid = Number((await run('id', ['-u', 'postgres'])).stdout);
      const gid = Number((await run('id', ['-g', 'postgres'])).stdout);
      for (const path of [this.dir, key, cert]) chownSync(path, uid, gid);
      chmodSync(this.dir, 0o700);
    }
    await asPostgres('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync']);
    writeFileSync(join(data, 'pg_hba.conf'), 'hostssl all all 127.0.0.1/32 trust\n');
    const options = [
      `-p ${TLS_PG_PORT}`,
      `-k ${this.dir}`,
      "-c listen_addresses='127.0.0.1'",
      '-c ssl=on',
      `-c ssl_cert_file='${cert}'`,
      `-c ssl_key_file='${key}'`,
      '-c fsync=off',
    ].join(' ');
    await asPostgres('pg_ctl', ['-D', data, '-o', options, '-l', join(this.dir, 'log'), '-w', 'start']);
  }

  async stop(): Promise<void> {
    if (existsSync(join(this.dir, 'data', 'postmaster.pid')))
      await asPostgres('pg_ctl', ['-D', join(this.dir, 'data'), '-m', 'immediate', '-w', 'stop']);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** redis-server with TLS only (`--port 0 --tls-port`), the test CA's server certificate, no client certificates. */
export class TlsRedis {
  private child?: ChildProcess;
  private output = '';
  readonly url = `rediss://127.0.0.1:${TLS_REDIS_PORT}`;
  constructor(private readonly ca: TestCa) {}

  async start(): Promise<void> {
    const args = [
      '--port',
      '0',
      '--tls-port',
      String(TLS_REDIS_PORT),
      '--bind',
      '127.0.0.1',
      '--tls-cert-file',
      this.ca.certFile,
      '--tls-key-file',
      this.ca.keyFile,
    ];
    args.push(
      '--tls-ca-cert-file',
      this.ca.caFile,
      '--tls-auth-clients',
      'no',
      '--save',
      '',
      '--appendonly',
      'no',
      '--daemonize',
      'no',
    );
    const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (d: Buffer) => (this.output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (this.output += d.toString()));
    this.child = child;
    const until = Date.now() + 10_000;
    while (!this.output.includes('Ready to accept connections')) {
      if (child.exitCode !== null || Date.now() > until)
        throw new Error(`redis-server with TLS on ${TLS_REDIS_PORT} did not start:\n${this.output}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
}
