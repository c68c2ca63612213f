/**
 * The stack's ceiling for a management API request: bare express on the API's own database handle
 * (the same knex, node-postgres, pool, type parsers and prepared statements) running the statements
 * the API sent for the same request, in the same order and concurrency, and answering the page's
 * rows with res.json. No authentication, filters, planner, envelope or representation: what a
 * request costs once Cairn's own layers are taken away, so what no work on them can beat.
 *
 * The statements are captured when the child starts: each path is sent once to the API's app,
 * served in this process on another port (lib/api-statements.ts; the API key's lookup left out:
 * the anchors authenticate nothing). A detail's statements are captured for one id and replayed
 * with the asked id in its place.
 */
import express from 'express';
import { createDeps, readConfig } from '@cairn/management-api';
import { recordingApi, type SentStatement } from './api-statements';
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

/** A statement in db.raw's form, with its prepared name. */
interface Raw {
  sql: string;
  bindings: unknown[];
  name?: string;
}

const DETAIL = /^\/api\/v1\/users\/(\d+)\/$/;

/**
 * A statement as knex's query event gives it (Postgres' `$n` placeholders) back in db.raw's form,
 * `?` in order, so it is sent as the API sends it and compiles to the same text.
 */
function asKnexRaw({ sql, bindings, name }: SentStatement): Raw {
  if (sql.includes('?')) throw new Error(`a captured statement holds a '?': ${sql.slice(0, 200)}`);
  const ordered: unknown[] = [];
  const raw = sql.replace(/\$(\d+)/g, (_, n: string) => (ordered.push(bindings[Number(n) - 1]), '?'));
  return { sql: raw, bindings: ordered, name };
}

/** The statements grouped into their batches, in order: each batch is sent together. */
function batchesOf(statements: SentStatement[]): Raw[][] {
  const batches = new Map<number, Raw[]>();
  for (const q of statements) {
    const batch = batches.get(q.batch) ?? [];
    if (batch.length === 0) batches.set(q.batch, batch);
    batch.push(asKnexRaw(q));
  }
  return [...batches.values()];
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
  const api = await recordingApi(deps);
  const capture = async (path: string): Promise<Raw[][]> => {
    const { status, text, statements } = await api.get(path, paths.authorization);
    if (status !== 200) throw new Error(`${path} answered ${status}: ${text}`);
    if (statements.length === 0) throw new Error(`${path}: no statement of the users captured`);
    return batchesOf(statements);
  };
  const lists = new Map<string, Raw[][]>();
  for (const path of paths.lists) lists.set(path, await capture(path));
  const detailId = paths.detail ? DETAIL.exec(paths.detail)?.[1] : undefined;
  const detail = paths.detail ? await capture(paths.detail) : [];
  api.close();

  const run = (q: Raw, bindings: unknown[]) => {
    const raw = db.raw(q.sql, bindings as never[]);
    return (q.name ? raw.options({ name: q.name }) : raw) as unknown as Promise<{ rows: unknown[] }>;
  };
  /** Batch after batch, each batch's statements together; the answer is the largest result's rows. */
  const replay = async (batches: Raw[][], bind: (b: unknown) => unknown = (b) => b): Promise<unknown[]> => {
    let rows: unknown[] = [];
    for (const batch of batches) {
      const results = await Promise.all(batch.map((q) => run(q, q.bindings.map(bind))));
      for (const r of results) if (r.rows.length > rows.length) rows = r.rows;
    }
    return rows;
  };

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.get(/^\/api\/v1\/users\//, async (req, res) => {
    const batches = lists.get(req.originalUrl);
    if (batches) return void res.json({ objects: await replay(batches) });
    const id = DETAIL.exec(req.originalUrl)?.[1];
    if (id === undefined || detailId === undefined) return void res.status(404).json({ error: 'not captured' });
    const rows = await replay(detail, (b) => (String(b) === detailId ? id : b));
    res.json(rows[0] ?? null);
  });
  serveApp(app, () => db.destroy());
}
