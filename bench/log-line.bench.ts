/**
 * One log line's cost in this process: the gateway's logger (its secrets censored by
 * `censorSecrets`, @cairn/runtime) beside pino's own `redact` given the same secrets as paths (the
 * library's way), and beside pino censoring nothing, writing to /dev/null.
 *
 *   pnpm bench:log-line
 *
 * Two lines: a request's completion line as the request log writes it (a child per request bound
 * to the request's id, method and path, then its status and time), and a line holding secrets (a
 * Keystone login body and a token header). Settings: BENCH_LINES_PER_ROUND (200,000),
 * BENCH_LOG_ROUNDS (3; the loggers take turns within each round). CPU µs per line.
 *
 * Run without the `cairn-source` condition (see package.json), after `pnpm build`: the gateway's
 * logger is its built dist/, as the gateway runs it, not its sources compiled by tsx.
 */
import { createWriteStream } from 'node:fs';
import pino, { type Logger } from 'pino';
import { createLogger, LOGGED_SECRETS } from '@cairn/auth-gateway';
import { intEnv } from './lib/env';

const SETTINGS = { lines: intEnv('BENCH_LINES_PER_ROUND', 200_000), rounds: intEnv('BENCH_LOG_ROUNDS', 3) };

/** The same secrets as pino `redact` paths: each field at the top and under any key, headers, body fields. */
function redactPaths(): string[] {
  const { fields, headers, bodyFields = [] } = LOGGED_SECRETS;
  return [
    ...fields.flatMap((f) => [f, `*.${f}`]),
    ...headers.flatMap((h) => [`req.headers["${h}"]`, `res.headers["${h}"]`]),
    ...bodyFields.flatMap((path) => [`body.${path.join('.')}`, `req.body.${path.join('.')}`]),
  ];
}

const LINES: Record<string, (log: Logger) => void> = {
  'request completed': (log) =>
    log
      .child({ req: { id: 'txc7471522d2efbeb48190a-006b0f349e', method: 'GET', url: '/auth/v1.0' } })
      .info({ res: { statusCode: 200 }, responseTime: 3 }, 'request completed'),
  'a line holding secrets': (log) =>
    log.warn(
      {
        req: { headers: { 'x-auth-token': 'tok', 'user-agent': 'swift' } },
        body: { auth: { passwordCredentials: { username: 'alice', password: 'pw' } } },
      },
      'refused',
    ),
};

function cpuMicrosPerLine(write: (log: Logger) => void, log: Logger, n: number): number {
  for (let i = 0; i < n / 10; i++) write(log);
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) write(log);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / n;
}

function main(): void {
  const sink = createWriteStream('/dev/null');
  const base = { service: 'auth-gateway' };
  const loggers: Record<string, Logger> = {
    "the gateway's logger (censorSecrets)": createLogger('info', sink),
    'pino redact, the same secrets as paths': pino({ level: 'info', base, redact: { paths: redactPaths() } }, sink),
    'pino, nothing censored': pino({ level: 'info', base }, sink),
  };
  const results = new Map<string, number[]>();
  for (let round = 0; round < SETTINGS.rounds; round++)
    for (const [line, write] of Object.entries(LINES))
      for (const [name, log] of Object.entries(loggers)) {
        const key = `${line} | ${name}`;
        results.set(key, [...(results.get(key) ?? []), cpuMicrosPerLine(write, log, SETTINGS.lines)]);
      }
  console.log(`CPU µs per line, ${SETTINGS.rounds} rounds of ${SETTINGS.lines.toLocaleString('en')} lines each:`);
  console.log('| line | logger | µs per line (each round) |\n|---|---|---|');
  for (const [key, runs] of results) console.log(`| ${key} | ${runs.map((r) => r.toFixed(2)).join(', ')} |`);
  sink.end();
}

main();
