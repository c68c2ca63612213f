/**
 * The statements behind the users-list scenarios of the management API benchmark, with their plans:
 * for each scenario (bench/lib/user-lists.ts) it sends the request to the API, takes the statements
 * the API sent for it (knex's query events), runs each prepared as the API runs it (a named
 * statement, executed until Postgres settles on the plan it keeps for it) and prints
 * `EXPLAIN (ANALYZE, BUFFERS)` of one more execution, and the statement's own latency over a few
 * executions: what Postgres alone takes, the ceiling for the request.
 *
 *   DATABASE_URL=postgres://…/<db seeded by pnpm bench> BENCH_USERS=10000000 pnpm bench:explain-users
 *
 * Environment: DATABASE_URL (required: a database the management API benchmark seeded with
 * BENCH_USERS users over BENCH_CLUSTERS clusters), BENCH_USERS (1000000), BENCH_CLUSTERS (10),
 * BENCH_SCENARIOS (a comma-separated subset of the list scenarios' keys), BENCH_RUNS (executions
 * timed per statement, 20), BENCH_PLAN_CACHE_MODE (how the named statements are planned: `auto`, as
 * the API's are, or `force_generic_plan` / `force_custom_plan`, to time the plan Postgres did not
 * choose beside the one it did), BENCH_PGBENCH_DIR (a directory: each scenario's statements are also
 * written there for pgbench, `<scenario>.sql` with every value a variable, so that `pgbench -M
 * prepared` sends them as parameters as the API does, and `<scenario>.args` with their `-D`
 * definitions: the statements alone under load, `pgbench -n -M prepared -c 10 -j 2 -T 10 -f
 * <dir>/<scenario>.sql $(cat <dir>/<scenario>.args) <db>`).
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { createDeps, readConfig } from '@cairn/management-api';
import { recordingApi, type SentStatement } from './lib/api-statements';
import { intEnv, stringEnv } from './lib/env';
import { fmtMs } from './lib/report';
import { listScenarios, type SeededUsers } from './lib/user-lists';

const SETTINGS = {
  databaseUrl: stringEnv('DATABASE_URL'),
  users: intEnv('BENCH_USERS', 1_000_000),
  clusters: intEnv('BENCH_CLUSTERS', 10),
  runs: intEnv('BENCH_RUNS', 20),
  scenarios: stringEnv('BENCH_SCENARIOS'),
  planCacheMode: stringEnv('BENCH_PLAN_CACHE_MODE', 'auto'),
  pgbenchDir: stringEnv('BENCH_PGBENCH_DIR'),
};
const PLAN_CACHE_MODES = ['auto', 'force_generic_plan', 'force_custom_plan'];

/** The benchmark's admin (bench/management-api.bench.ts creates it with this key). */
const AUTHORIZATION = 'ApiKey bench-admin:cairn-bench-admin-key-not-a-secret-0123456789';
/** Postgres' plan cache compares custom plans with the generic one over the first five executions. */
const SETTLE_RUNS = 6;

async function main(): Promise<void> {
  const url = SETTINGS.databaseUrl;
  if (!url) throw new Error('DATABASE_URL must name a database seeded by the management API benchmark');
  if (!PLAN_CACHE_MODES.includes(SETTINGS.planCacheMode))
    throw new Error(`BENCH_PLAN_CACHE_MODE must be one of ${PLAN_CACHE_MODES.join(', ')}`);
  const deps = createDeps(
    readConfig({
      DATABASE_URL: url,
      LOG_LEVEL: 'warn',
      CAIRN_MIGRATE_ON_START: 'false',
      CAIRN_CREATE_DEFAULT_CLUSTER: 'false',
    }),
  );
  const api = await recordingApi(deps);
  const pg = new Client({ connectionString: url, application_name: 'cairn-bench-explain' });
  await pg.connect();
  try {
    const seeded = await seededUsers(pg);
    const wanted = SETTINGS.scenarios?.split(',').map((s) => s.trim());
    const scenarios = listScenarios(SETTINGS.users, SETTINGS.clusters).filter((s) => !wanted || wanted.includes(s.key));
    const settings = await pg.query<{ v: string; sb: string; jit: string }>(
      `SELECT current_setting('server_version') AS v, current_setting('shared_buffers') AS sb, current_setting('jit') AS jit`,
    );
    const s = settings.rows[0]!;
    console.log(
      `${seeded.totalUsers.toLocaleString('en-US')} users; PostgreSQL ${s.v}, shared_buffers ${s.sb}, jit ${s.jit}`,
    );
    const summary: string[] = [];
    for (const scenario of scenarios) {
      const path = scenario.path(seeded, 0);
      const { status, text, statements } = await api.get(path, AUTHORIZATION);
      if (status !== 200) throw new Error(`${path} answered ${status}: ${text}`);
      const body = JSON.parse(text) as { meta?: { total_count: number } };
      const expected = scenario.total(seeded);
      if (body.meta?.total_count !== expected)
        throw new Error(`${path}: total_count ${body.meta?.total_count}, expected ${expected}`);
      console.log(`\n### ${scenario.key}\n\n\`GET ${path}\` (total_count ${expected})`);
      if (SETTINGS.pgbenchDir) writePgbench(SETTINGS.pgbenchDir, scenario.key, statements);
      let [min, p50, max, pages] = [0, 0, 0, 0];
      for (const q of statements) {
        const t = await explain(pg, q);
        [min, p50, max, pages] = [min + t.min, p50 + t.p50, max + t.max, pages + t.pages];
      }
      summary.push(`| \`${scenario.key}\` | ${fmtMs(min)} | ${fmtMs(p50)} | ${fmtMs(max)} | ${pages} |`);
    }
    // The least of a few runs is the statement's own work, the least disturbed by other processes.
    console.log('\n| scenario | execution min ms | p50 ms | max ms | buffers |\n|---|---|---|---|---|');
    console.log(summary.join('\n'));
  } finally {
    await pg.end();
    api.close();
    await deps.db.destroy();
  }
}

async function seededUsers(pg: Client): Promise<SeededUsers> {
  const clusters = await pg.query<{ id: number; name: string; uuid: string }>(
    `SELECT id, name, uuid FROM clusters WHERE name LIKE 'bench-%' ORDER BY name LIMIT $1`,
    [SETTINGS.clusters],
  );
  const total = await pg.query<{ n: string }>('SELECT sum(user_count) AS n FROM cluster_user_counts');
  return {
    clusterIds: clusters.rows.map((r) => Number(r.id)),
    clusterNames: clusters.rows.map((r) => r.name),
    clusterUuids: clusters.rows.map((r) => r.uuid),
    totalUsers: Number(total.rows[0]!.n),
  };
}

/**
 * The statements as a pgbench script: `$n` of the i-th statement becomes `:s<i>_<n>`, defined in the
 * `.args` file with `-D`, one per line. Values go on a command line, so only plain ones are written.
 */
function writePgbench(dir: string, key: string, statements: SentStatement[]): void {
  const args: string[] = [];
  const script = statements.map((q, i) => {
    q.bindings.forEach((b, n) => {
      const value = String(b);
      if (b === null || b === undefined || !/^[\w.%:-]*$/.test(value))
        throw new Error(`${key}: value ${value} cannot be given to pgbench with -D`);
      args.push(`-D s${i}_${n + 1}=${value}`);
    });
    return `${q.sql.replace(/\$(\d+)/g, (_, n: string) => `:s${i}_${n}`).replace(/\s*\n\s*/g, ' ')};`;
  });
  writeFileSync(join(dir, `${key}.sql`), `${script.join('\n')}\n`);
  writeFileSync(join(dir, `${key}.args`), `${args.join('\n')}\n`);
}

/** Runs the statement as the API does (named where the API names it), then its plan and its times. */
async function explain(
  pg: Client,
  q: SentStatement,
): Promise<{ min: number; p50: number; max: number; pages: number }> {
  // An unnamed statement is prepared here under a name of its text, to read the plan Postgres keeps.
  const name = q.name ?? `cairn_explain_${createHash('sha256').update(q.sql).digest('hex').slice(0, 24)}`;
  const values = q.bindings.map((b) => (b === null || b === undefined ? null : String(b)));
  // Sent unnamed, Postgres plans the statement with its values every time: the same here.
  await pg.query(`SET plan_cache_mode = ${q.name ? SETTINGS.planCacheMode : 'force_custom_plan'}`);
  const run = () => pg.query({ name, text: q.sql, values });
  for (let i = 0; i < SETTLE_RUNS; i++) await run();
  const literals = values.map((v) => (v === null ? 'NULL' : pg.escapeLiteral(v))).join(', ');
  const execute = `EXECUTE ${pg.escapeIdentifier(name)}${values.length ? `(${literals})` : ''}`;
  // Postgres' own execution time (from EXPLAIN ANALYZE without per-node timing) and the round trip.
  const server: number[] = [];
  const wall: number[] = [];
  for (let i = 0; i < SETTINGS.runs; i++) {
    const t0 = performance.now();
    const r = await pg.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, TIMING OFF, SUMMARY) ${execute}`);
    wall.push(performance.now() - t0);
    const line = r.rows.map((x) => x['QUERY PLAN']).find((l) => l.startsWith('Execution Time:'));
    server.push(Number(line?.match(/[\d.]+/)?.[0]));
  }
  const at = (xs: number[], p: number) =>
    [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
  const plan = await pg.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${execute}`);
  console.log(`\nStatement (${q.name ? 'named' : 'unnamed'}), values ${literals}:\n\n\`\`\`sql\n${q.sql}\n\`\`\`\n`);
  console.log(
    `Executed alone ${SETTINGS.runs} times after ${SETTLE_RUNS}: execution p50 ${fmtMs(at(server, 0.5))} ms, ` +
      `max ${fmtMs(at(server, 1))} ms; round trip p50 ${fmtMs(at(wall, 0.5))} ms, max ${fmtMs(at(wall, 1))} ms.\n`,
  );
  console.log(`\`\`\`\n${plan.rows.map((r) => r['QUERY PLAN']).join('\n')}\n\`\`\``);
  // The root's buffers (its own and every node's under it): pages touched, whatever the machine's load.
  const root = plan.rows.map((r) => r['QUERY PLAN']).find((l) => /^\s*Buffers:/.test(l)) ?? '';
  const pages = [...root.matchAll(/(?:hit|read)=(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
  return { min: at(server, 0), p50: at(server, 0.5), max: at(server, 1), pages };
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
