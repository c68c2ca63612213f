import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, chmodSync, constants, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../support/processes';

/** Debian's package `nginx` (or `nginx-light`) installs it here; .ci/run installs it before `pnpm test`. */
export const NGINX = process.env.NGINX_BIN ?? '/usr/sbin/nginx';

export interface Upstreams {
  /** host:port of every management-api replica. */
  api: string[];
  /** host:port of every auth-gateway replica of one cluster. */
  gateway: string[];
}

/**
 * The load balancer's configuration: `/api/` to the management-api replicas, `/auth/` to the
 * gateway replicas. The upstream and proxy directives are the ones docs/deployment.md recommends for a
 * deployment; only the paths (pid, logs, temp files in `dir`) and the loopback listener are
 * particular to the test.
 */
export function nginxConfig(
  dir: string,
  port: number,
  upstreams: Upstreams,
  options: { exposeUpstream?: boolean } = {},
): string {
  // max_fails=1 fail_timeout=3s: one failed connection takes a replica out of rotation for 3 s,
  // then one request probes it again (and goes to the next replica if the probe fails). A dead
  // replica therefore costs a retry at most every 3 s instead of one per request.
  const servers = (list: string[]) => list.map((s) => `    server ${s} max_fails=1 fail_timeout=3s;`).join('\n');
  return `daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;

events {
  worker_connections 1024;
}

http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;

  upstream cairn_api {
${servers(upstreams.api)}
    # Reused connections to the replicas; closed by nginx (4 s) before Node closes them (its
    # keepAliveTimeout is 5 s), so nginx never sends a request on a connection Node is closing.
    keepalive 16;
    keepalive_timeout 4s;
  }

  upstream cairn_gateway {
${servers(upstreams.gateway)}
    keepalive 16;
    keepalive_timeout 4s;
  }

  server {
    listen 127.0.0.1:${port};

    proxy_http_version 1.1;
    proxy_set_header Connection "";
    proxy_set_header Host $http_host;
    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    proxy_set_header X-Forwarded-Proto $scheme;
    # A replica that does not accept within 1 s is treated as down (loopback/LAN: it is).
    proxy_connect_timeout 1s;
    proxy_read_timeout 30s;
    proxy_next_upstream_tries 3;
${
  // Test only: which replica(s) answered, e.g. "127.0.0.1:4001, 127.0.0.1:4002" after a retry.
  // A deployment should not tell clients its internal addresses.
  options.exposeUpstream ? '    add_header X-Upstream-Addr $upstream_addr always;\n' : ''
}
    location / {
      return 404;
    }

    location /api/ {
      proxy_pass http://cairn_api;
      # Passive failover. \`error\` covers both "could not connect" and "connection lost after the
      # request was sent". nginx retries a POST/PATCH on the next replica only in the first case
      # (the request never reached any replica), unless \`non_idempotent\` is given. We do NOT give
      # it here: a POST /api/v1/users/ that reached a replica which died before answering may
      # have committed; replaying it elsewhere would answer "already exists" (or create twice for
      # a non-unique resource). Such a request gets a 502, and the client must check before
      # retrying. GET, PUT and DELETE are idempotent and are retried in all listed cases.
      proxy_next_upstream error timeout http_502 http_503;
    }

    location /auth/ {
      proxy_pass http://cairn_gateway;
      # Here replaying a POST is safe: a login (V2/V3 POST) only issues a token. A login replayed
      # after its first replica died mid-way leaves at most an unused token in Redis that expires,
      # so \`non_idempotent\` lets nginx hide gateway crashes from clients completely. (A replayed
      # wrong-password attempt counts twice towards the per-user failure limit: acceptable.)
      proxy_next_upstream error timeout http_502 http_503 non_idempotent;
    }
  }
}
`;
}

export interface RunningNginx {
  child: ChildProcess;
  url: string;
  /** The error log, to explain a failure. */
  errorLog: () => string;
  stop: () => Promise<void>;
}

/** Throws a clear error (no silent skip) when nginx is not installed. */
export function requireNginx(): void {
  try {
    accessSync(NGINX, constants.X_OK);
  } catch {
    throw new Error(
      `The multi-replica test needs nginx at ${NGINX} (Debian: apt-get install nginx; .ci/run installs it). Set NGINX_BIN to use another path.`,
    );
  }
}

/**
 * Runs nginx in the foreground (`daemon off`) as a child process with its own configuration in
 * `dir`, on a free loopback port; resolves once it answers.
 */
export async function startNginx(
  dir: string,
  upstreams: Upstreams,
  options: { exposeUpstream?: boolean } = {},
  timeoutMs = 15_000,
): Promise<RunningNginx> {
  requireNginx();
  // The master runs as root in CI; its workers then run as `nobody` and must reach the temp paths.
  chmodSync(dir, 0o755);
  const port = await freePort();
  const confFile = join(dir, 'nginx.conf');
  writeFileSync(confFile, nginxConfig(dir, port, upstreams, options));
  // -e: the error log from the very start (before the config is read), not the packaged path.
  const child = spawn(NGINX, ['-p', dir, '-c', confFile, '-e', join(dir, 'error.log')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let gone = false;
  void exited.then(() => (gone = true));
  const errorLog = () => {
    try {
      return `${out}${readFileSync(join(dir, 'error.log'), 'utf8')}`;
    } catch {
      return out;
    }
  };
  const stop = async () => {
    if (gone) return;
    child.kill('SIGTERM'); // nginx: fast shutdown
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (gone) throw new Error(`nginx exited during start:\n${errorLog()}`);
    // Any answer from nginx itself will do (404 outside /api/ and /auth/).
    const up = await fetch(`${url}/`, { signal: AbortSignal.timeout(1_000) }).then(
      () => true,
      () => false,
    );
    if (up && !gone) return { child, url, errorLog, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`nginx did not answer on ${url} within ${timeoutMs} ms:\n${errorLog()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
