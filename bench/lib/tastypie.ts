/**
 * The django-tastypie anchor (bench/tastypie/): plain tastypie over the benchmark's own tables,
 * served by gunicorn from Debian's packages with one single-threaded worker per core, DEBUG off. Started
 * beside the services it is compared with; measured with the same load generator and settings.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { party, type Party } from './cpu';
import type { Cleanups } from './main';

/** Debian's interpreter: the one its python3-* packages are installed for (not a pyenv on PATH). */
const PYTHON = '/usr/bin/python3';
const PROJECT_DIR = join(__dirname, '..', 'tastypie');
export const TASTYPIE_PACKAGES = 'python3-django-tastypie python3-django python3-psycopg2 gunicorn';

/** Whether the anchor can run here: null when it can, else why not (and what to install). */
export function tastypieMissing(): string | null {
  const probe = spawnSync(
    PYTHON,
    ['-c', 'import django, tastypie, psycopg2, gunicorn; print(django.get_version(), tastypie.__version__)'],
    { encoding: 'utf8' },
  );
  if (probe.error || probe.status !== 0) {
    const why = probe.error ? probe.error.message : probe.stderr.trim().split('\n').at(-1);
    return `${why ?? 'import failed'} (apt-get install -y ${TASTYPIE_PACKAGES})`;
  }
  return null;
}

export interface TastypieAnchor {
  port: number;
  /** gunicorn's master and its workers (their own process group). */
  server: Party;
  workers: number;
  /** e.g. "Django 3.2.25, django-tastypie 0.13.3, gunicorn 20.1.0 (gthread, 1 thread)". */
  versions: string;
}

/** A free loopback port for gunicorn to bind (it cannot report the port of a bind to port 0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

function exited(proc: ChildProcess): boolean {
  return proc.exitCode !== null || proc.signalCode !== null;
}

async function stop(proc: ChildProcess): Promise<void> {
  if (exited(proc)) return;
  const gone = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  // gunicorn's graceful stop: the master ends its workers, then itself.
  proc.kill('SIGTERM');
  const late = setTimeout(() => {
    // Still there: the master and its workers, by their own process group (the one started here).
    try {
      process.kill(-proc.pid!, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }, 10_000);
  await gone;
  clearTimeout(late);
}

/** Polls the API root until it answers 200 (30 s at most), or the server exits. */
async function ready(proc: ChildProcess, port: number): Promise<void> {
  const deadline = performance.now() + 30_000;
  for (;;) {
    if (exited(proc))
      throw new Error(`tastypie anchor exited with ${proc.exitCode ?? proc.signalCode} before answering`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/`, { headers: { accept: 'application/json' } });
      await res.text();
      if (res.status === 200) return;
    } catch {
      /* not listening yet */
    }
    if (performance.now() > deadline) throw new Error('tastypie anchor did not answer within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Starts the anchor on `databaseUrl`, waits until it answers; `cleanups` stops it. `workers`:
 * gunicorn worker processes (default one per core; gunicorn's own default is one).
 */
export async function startTastypie(
  databaseUrl: string,
  cleanups: Cleanups,
  workers = availableParallelism(),
): Promise<TastypieAnchor> {
  const port = await freePort();
  const proc = spawn(
    PYTHON,
    [
      '-m',
      'gunicorn',
      '--workers',
      String(workers),
      // One request at a time per worker process, as sync workers, but over persistent connections:
      // sync workers close every connection after its response, and autocannon (which keeps
      // connections open, as with every other party) counts the request it already sent on the
      // closing connection as an error.
      '--worker-class',
      'gthread',
      '--threads',
      '1',
      '--bind',
      `127.0.0.1:${port}`,
      '--log-level',
      'warning',
      'anchor.wsgi:application',
    ],
    {
      cwd: PROJECT_DIR,
      env: {
        ...process.env,
        CAIRN_ANCHOR_DATABASE_URL: databaseUrl,
        DJANGO_SETTINGS_MODULE: 'anchor.settings',
        PYTHONDONTWRITEBYTECODE: '1',
      },
      // Its own process group: the CPU column counts the master and every worker as the server.
      detached: true,
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  cleanups.push(() => stop(proc));
  await ready(proc, port);
  const versions = spawnSync(
    PYTHON,
    [
      '-c',
      'import django, tastypie, gunicorn; print(f"Django {django.get_version()}, django-tastypie {tastypie.__version__}, gunicorn {gunicorn.__version__} (gthread, 1 thread)")',
    ],
    { encoding: 'utf8' },
  ).stdout.trim();
  return { port, server: party.group('server', proc.pid!), workers, versions };
}
