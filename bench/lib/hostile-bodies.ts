/**
 * The body flood of `pnpm bench:hostile`: clients without credentials send large bodies at once to
 * every route that reads one, streamed from a generator (this process holds one chunk, never a
 * body), each on a connection of its own. A service must refuse each before reading its body, so
 * its memory stays flat and every answer comes at once. Prints the memory and latency of both
 * services under it, and gives the bench its pass/fail lines: every answer a refusal, RSS grown by
 * less than 64 MB per service. The latency target is printed as met or missed (on a shared machine
 * other tenants decide much of it).
 *
 *   BENCH_BODY_FLOOD   bodies of each kind per service (default 20)
 */
import {
  gzipBomb,
  rssBytes,
  sendFlood,
  watchRss,
  type FloodAnswer,
  type FloodRequest,
} from '../../test-e2e/support/body-flood';
import { intEnv } from './env';
import { fmtInt, fmtMs, table } from './report';

const MB = 1024 * 1024;
/** Per service: what may be added to its resident memory by the whole flood. */
const MAX_GROWTH = 64 * MB;
/**
 * Target (printed, not a failure): the slowest answer within this much of the slowest of as many 1 KB requests sent
 * together.
 */
const MAX_EXTRA_MS = 100;

/** The routes that read a body, a cluster that exists (1) and one that does not. */
const API_BODY_ROUTES: Array<[string, string]> = [
  ['PUT', '/api/v1/clusters/1/devices/'],
  ['PUT', '/api/v1/clusters/999/devices/'],
  ['POST', '/api/v1/clusters/1/utilization/storage/'],
  ['POST', '/api/v1/clusters/1/utilization/transfer/'],
  ['POST', '/api/v1/users/'],
];
const GATEWAY_BODY_ROUTES: Array<[string, string]> = [
  ['POST', '/auth/v3/s3tokens'],
  ['POST', '/auth/v3/users/alice/credentials/OS-EC2'],
  ['POST', '/auth/v3/auth/tokens'],
  ['POST', '/auth/v2.0/tokens'],
];

/** A service process: its address and pid. */
export interface FloodedService {
  base: string;
  pid: number;
}

interface BodyFloodTarget extends FloodedService {
  name: string;
  /** [method, path] of the routes that read bodies. */
  routes: Array<[string, string]>;
  /** The refusals that may answer (the gateway refuses a declared size over 64 KB with 413 before anything else). */
  accept: number[];
}

interface Kind {
  label: string;
  request: (method: string, path: string) => Omit<FloodRequest, 'base'>;
}

export interface BodyFloodOutcome {
  checks: Array<[string, boolean]>;
}

const pct = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;

/** Sends the flood to the API, then to the gateway, and prints what it cost; the checks go to the bench's verdict. */
export async function runBodyFlood(api: FloodedService, gateway: FloodedService): Promise<BodyFloodOutcome> {
  const targets: BodyFloodTarget[] = [
    { ...api, name: 'api', accept: [401], routes: API_BODY_ROUTES },
    { ...gateway, name: 'gateway', accept: [401, 413], routes: GATEWAY_BODY_ROUTES },
  ];
  const count = intEnv('BENCH_BODY_FLOOD', 20);
  const bomb = await gzipBomb(190 * MB);
  const kinds: Kind[] = [
    { label: '150 MB', request: (method, path) => ({ method, path, body: 150 * MB }) },
    { label: `150 MB chunked`, request: (method, path) => ({ method, path, body: 150 * MB, chunked: true }) },
    {
      label: `gzip ${fmtInt(bomb.length / 1024)} KB → 190 MB`,
      request: (method, path) => ({ method, path, body: bomb, headers: { 'Content-Encoding': 'gzip' } }),
    },
  ];
  console.log(
    `\nbody flood: per service, ${count} bodies of each kind at once, no credentials, over every route that reads a body`,
  );
  const rows: string[][] = [];
  const checks: Array<[string, boolean]> = [];
  for (const target of targets) {
    const requests: FloodRequest[] = [];
    for (const kind of kinds) {
      for (let i = 0; i < count; i++) {
        const [method, path] = target.routes[i % target.routes.length]!;
        requests.push({ ...kind.request(method, path), base: target.base });
      }
    }
    // As many requests with 1 KB bodies, at once, before and after: what that many answers take on
    // this machine around the flood.
    const tiny = async () =>
      Math.max(
        ...(await Promise.all(requests.map((r) => sendFlood({ ...r, body: 1024, chunked: false, headers: {} })))).map(
          (a) => a.ms,
        ),
      );
    const tinyBefore = await tiny();
    const before = rssBytes(target.pid);
    const rss = watchRss(target.pid);
    const started = performance.now();
    const answers = await Promise.all(requests.map(sendFlood));
    const wall = performance.now() - started;
    await new Promise((r) => setTimeout(r, 300));
    const grown = rss.stop() - before;
    const baseline = Math.max(tinyBefore, await tiny());
    const byKind = kinds.map((kind, k) => ({ kind, answers: answers.slice(k * count, (k + 1) * count) }));
    for (const { kind, answers: a } of byKind) rows.push(row(target.name, kind.label, a));
    const wrong = answers.filter((a) => a.status === null || !target.accept.includes(a.status)).length;
    const slowest = Math.max(...answers.map((a) => a.ms));
    const met = slowest < MAX_EXTRA_MS + baseline;
    console.log(
      `${target.name}: RSS ${fmtInt(before / MB)} MB before, peak ${fmtInt((before + grown) / MB)} MB (+${(grown / MB).toFixed(1)} MB); ` +
        `${answers.length} answers in ${fmtMs(wall)} ms, slowest ${fmtMs(slowest)} ms; as many requests with 1 KB bodies at once: slowest ${fmtMs(baseline)} ms ` +
        `(target: the flood's slowest within ${MAX_EXTRA_MS} ms of that, ${met ? 'met' : 'missed'})`,
    );
    // Broken, not a missed target: an answer that is not a refusal, or memory taken by bodies.
    checks.push(
      [
        `body flood, ${target.name}: every answer a refusal (${target.accept.join(' or ')}; others: ${wrong})`,
        wrong === 0,
      ],
      [
        `body flood, ${target.name}: RSS grew ${(grown / MB).toFixed(1)} MB (< ${MAX_GROWTH / MB} MB)`,
        grown < MAX_GROWTH,
      ],
    );
  }
  console.log(
    table(['service', 'bodies', 'answers', 'p50 ms', 'p99 ms', 'max ms', 'sent before the answer (mean)'], rows),
  );
  return { checks };
}

function row(service: string, label: string, answers: FloodAnswer[]): string[] {
  const ms = answers.map((a) => a.ms).sort((x, y) => x - y);
  const statuses = new Map<string, number>();
  for (const a of answers)
    statuses.set(String(a.status ?? a.error), (statuses.get(String(a.status ?? a.error)) ?? 0) + 1);
  const sent = answers.reduce((n, a) => n + a.sentBytes, 0) / answers.length;
  return [
    service,
    label,
    [...statuses].map(([s, n]) => `${n}× ${s}`).join(', '),
    fmtMs(pct(ms, 0.5)),
    fmtMs(pct(ms, 0.99)),
    fmtMs(ms[ms.length - 1] ?? 0),
    `${(sent / MB).toFixed(2)} MB`,
  ];
}
