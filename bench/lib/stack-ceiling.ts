/**
 * The stack's ceiling for a management API request: bare express on the API's own database handle
 * (the same knex, node-postgres, pool, type parsers and prepared statements) running the statements
 * the API sent for the same request, in the same order and concurrency, and answering the page's
 * rows with res.json. No authentication, filters, planner, envelope or representation: what a
 * request costs once Cairn's own layers are taken away, so what no work on them can beat.
 *
 * The statements are captured when the child starts: each path is sent once to the API's app,
 * served in this process on another port, and knex's query events record what it sent (the API
 * key's lookup left out: the anchors authenticate nothing). A detail's statements are captured for
 * one id and replayed with the asked id in its place.
 */
import express from 'express';
import { listen } from '@cairn/runtime';
import { createApp, createDeps, readConfig } from '@cairn/management-api';
import { serveApp } from './children';

export const STACK_ROLE = 'stack';

/** What the parent tells the child to capture (BENCH_CHILD_STACK, JSON). */
export interface StackPaths {
  /** List paths, each replayed as captured. */
  lists: string[];
  /** A user's detail path, `/api/v1/users/<id>/`: replayed for any id. */
  detail?: string;
  /** The Authorization header the capture requests carry. */
  authorization: string;
}

interface Sent {
  sql: string;
  bindings: unknown[];
  name?: string;
  /** Statements of one batch were sent before any of them answered (run together). */
  batch: number;
}

const DETAIL = /^\/api\/v1\/users\/(\d+)\/$/;
/** The user's statements, as bench/explain-users.ts picks them. */
const isUsersStatement = (sql: string) => /\bstorage_users\b|\bclusters\b/.test(sql) && !/api_keys/.test(sql);

/**
 * A statement as knex's query event gives it (Postgres' `$n` placeholders) back in db.raw's form,
 * `?` in order, so it is sent as the API sends it and compiles to the same text.
 */
function asKnexRaw(sql: string, bindings: unknown[]): { sql: string; bindings: unknown[] } {
  if (sql.includes('?')) throw new Error(`a captured statement holds a '?': ${sql.slice(0, 200)}`);
  const ordered: unknown[] = [];
  const raw = sql.replace(/\$(\d+)/g, (_, n: string) => (ordered.push(bindings[Number(n) - 1]), '?'));
  return { sql: raw, bindings: ordered };
}

export async function serveStackCeiling(databaseUrl: string, poolMax: number): Promise<void> {
  const paths = JSON.parse(process.env.BENCH_CHILD_STACK ?? '{}') as StackPaths;
  const deps = createDeps(
    readConfig({
      DATABASE_URL: databaseUrl,
      DATABASE_POOL_MAX: String(poolMax),
      LOG_LEVEL: 'warn',
      CAIRN_MIGRATE_ON_START: 'false',
      CAIRN_CREATE_DEFAULT_CLUSTER: 'false',
    }),
  );
  const { db } = deps;
  let sent: Sent[] = [];
  let capturing = true;
  let answered = 0;
  db.on('query', (q: { sql: string; bindings?: unknown[]; options?: { name?: string } }) => {
    if (capturing && isUsersStatement(q.sql))
      sent.push({ ...asKnexRaw(q.sql, q.bindings ?? []), name: q.options?.name, batch: answered });
  });
  db.on('query-response', () => void answered++);
  const api = await listen(createApp(deps), 0, '127.0.0.1');
  const capture = async (path: string): Promise<Sent[]> => {
    sent = [];
    answered = 0;
    const res = await fetch(`http://127.0.0.1:${api.port}${path}`, {
      headers: { authorization: paths.authorization, accept: 'application/json' },
    });
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
    if (sent.length === 0) throw new Error(`${path}: no statement of the users captured`);
    return sent;
  };
  const lists = new Map<string, Sent[]>();
  for (const path of paths.lists) lists.set(path, await capture(path));
  const detailId = paths.detail ? DETAIL.exec(paths.detail)?.[1] : undefined;
  const detail = paths.detail ? await capture(paths.detail) : [];
  api.server.close();
  capturing = false;

  const run = (q: Sent, bindings: unknown[]) => {
    const raw = db.raw(q.sql, bindings as never[]);
    return (q.name ? raw.options({ name: q.name }) : raw) as unknown as Promise<{ rows: unknown[] }>;
  };
  /** Batch after batch, each batch's statements together; the answer is the largest result's rows. */
  const replay = async (statements: Sent[], bind: (b: unknown) => unknown = (b) => b): Promise<unknown[]> => {
    let rows: unknown[] = [];
    for (let i = 0; i < statements.length;) {
      const batch = statements.filter((q) => q.batch === statements[i]!.batch);
      const results = await Promise.all(batch.map((q) => run(q, q.bindings.map(bind))));
      for (const r of results) if (r.rows.length > rows.length) rows = r.rows;
      i += batch.length;
    }
    return rows;
  };

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.get(/^\/api\/v1\/users\//, async (req, res) => {
    const statements = lists.get(req.originalUrl);
    if (statements) return void res.json({ objects: await replay(statements) });
    const id = DETAIL.exec(req.originalUrl)?.[1];
    if (id === undefined || detailId === undefined) return void res.status(404).json({ error: 'not captured' });
    const rows = await replay(detail, (b) => (String(b) === detailId ? id : b));
    res.json(rows[0] ?? null);
  });
  serveApp(app, () => db.destroy());
}
