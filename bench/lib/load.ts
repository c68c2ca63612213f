/**
 * Load: autocannon in this (parent) process against one server at a time, latency percentiles
 * computed from every response time (sub-millisecond; autocannon's own histogram rounds to whole
 * milliseconds), CPU per party from /proc, and the baseline measured again after every scenario.
 */
import autocannon from 'autocannon';
import { cpuShares, cpuSnapshot, coresBetween, type CpuShare, type CpuSnapshot, type Party } from './cpu';
import { fmtInt, fmtMs } from './report';

export interface RequestShape {
  path: string;
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD';
  headers?: Record<string, string>;
  body?: string;
}

/** A server under load: where it listens and which processes are "server" in the CPU column. */
export interface Target {
  port: number;
  server: Party;
}

export interface Scenario {
  key: string;
  label: string;
  target: Target;
  /** Each request; called per request so paths, names and bodies can vary. */
  request: () => RequestShape;
  /** The only status accepted; default: any 2xx. */
  expectStatus?: number;
  /** autocannon's per-request timeout (default 10 s). */
  timeoutSeconds?: number;
  /** Before measuring the next scenario, wait until this server has finished the work it still holds. */
  drain?: boolean;
  /**
   * Warm-up and measurement in one run on the same connections (only responses completing in the
   * measured window count) instead of a warm-up run followed by a fresh measured run.
   */
  continuous?: boolean;
  /** Runs right before the scenario's warm-up. */
  prepare?: () => Promise<void>;
}

export interface LoadSettings {
  connections: number;
  warmup: number;
  duration: number;
  /** Parties other than the server whose CPU is reported (e.g. postgres, the load generator). */
  parties: Party[];
}

export interface Measured {
  scenario: Scenario;
  rps: number;
  requests: number;
  p50: number;
  p99: number;
  /** Cores used during the measurement: server, the settings' parties, then `other` (the rest of the machine). */
  cpu: CpuShare[];
  /** For scenarios other than the baseline: mean req/s of the baseline runs just before and just after. */
  baselineRps?: number;
}

export const percentile = (sorted: number[], p: number): number => {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
};

/** The middle value (the mean of the two middle ones for an even count). */
export const median = (xs: number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

function fire(
  scenario: Scenario,
  connections: number,
  seconds: number,
  onResponse?: (ms: number) => void,
): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `http://127.0.0.1:${scenario.target.port}`,
        connections,
        duration: seconds,
        ...(scenario.timeoutSeconds ? { timeout: scenario.timeoutSeconds } : {}),
        requests: [
          {
            setupRequest: (req) => {
              const r = scenario.request();
              return { ...req, ...r, headers: { ...req.headers, ...r.headers } };
            },
          },
        ],
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
    if (onResponse) instance.on('response', (_client, _status, _bytes, ms: number) => onResponse(ms));
  });
}

/** Any unexpected status, socket error, timeout or mismatch makes every figure meaningless: stop loudly. */
function assertClean(scenario: Scenario, result: autocannon.Result, phase: string): void {
  const stats = (result.statusCodeStats ?? {}) as Record<string, { count?: number }>;
  const expect = scenario.expectStatus;
  const unexpected =
    expect === undefined
      ? result.non2xx
      : Object.entries(stats).reduce((n, [code, s]) => (Number(code) === expect ? n : n + (s.count ?? 0)), 0);
  const bad = unexpected + result.errors + result.timeouts + result.mismatches;
  if (bad === 0 && result.requests.total > 0) return;
  throw new Error(
    `${scenario.label} (${phase}): ${result.requests.total} requests, ${unexpected} ${expect === undefined ? 'non-2xx' : `not ${expect}`}, ` +
      `${result.errors} errors, ${result.timeouts} timeouts; status codes ${JSON.stringify(result.statusCodeStats ?? {})}`,
  );
}

export async function measure(scenario: Scenario, settings: LoadSettings): Promise<Measured> {
  if (scenario.prepare) await scenario.prepare();
  const m = scenario.continuous
    ? await measureContinuous(scenario, settings)
    : await measureAfterWarmup(scenario, settings);
  process.stdout.write(`${fmtInt(m.rps)} req/s, p50 ${fmtMs(m.p50)} ms\n`);
  if (scenario.drain) await drain(scenario);
  return m;
}

/** A warm-up run, then a separate measured run with new connections. */
async function measureAfterWarmup(scenario: Scenario, settings: LoadSettings): Promise<Measured> {
  if (settings.warmup > 0) {
    process.stdout.write(`  ${scenario.label}: warm-up ${settings.warmup} s ... `);
    const warm = await fire(scenario, settings.connections, settings.warmup);
    assertClean(scenario, warm, 'warm-up');
  } else {
    process.stdout.write(`  ${scenario.label}: `);
  }
  process.stdout.write(`measuring ${settings.duration} s ... `);
  const latencies: number[] = [];
  const before = cpuSnapshot();
  const result = await fire(scenario, settings.connections, settings.duration, (ms) => latencies.push(ms));
  const after = cpuSnapshot();
  assertClean(scenario, result, 'measurement');
  latencies.sort((a, b) => a - b);
  return {
    scenario,
    rps: result.requests.average,
    requests: result.requests.total,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    cpu: cpuShares(before, after, [scenario.target.server, ...settings.parties]),
  };
}

/**
 * One run of warm-up + duration on the same connections; only responses completing within the
 * last `duration` seconds count. The server never sees its queue emptied between warm-up and
 * measurement, which matters when requests take seconds (a password hash each).
 */
async function measureContinuous(scenario: Scenario, settings: LoadSettings): Promise<Measured> {
  process.stdout.write(
    `  ${scenario.label}: ${settings.warmup > 0 ? `warm-up ${settings.warmup} s, then ` : ''}measuring ${settings.duration} s ... `,
  );
  const done: Array<{ at: number; ms: number }> = [];
  const window: { from?: number; to?: number } = {};
  let before: CpuSnapshot | null = null;
  let after: CpuSnapshot | null = null;
  const open = () => {
    before = cpuSnapshot();
    window.from = performance.now();
  };
  const close = () => {
    if (window.to !== undefined) return;
    window.to = performance.now();
    after = cpuSnapshot();
  };
  const opening = setTimeout(open, settings.warmup * 1000);
  const closing = setTimeout(close, (settings.warmup + settings.duration) * 1000);
  const result = await fire(scenario, settings.connections, settings.warmup + settings.duration, (ms) =>
    done.push({ at: performance.now(), ms }),
  );
  clearTimeout(opening);
  clearTimeout(closing);
  if (window.from === undefined) open();
  close();
  assertClean(scenario, result, 'warm-up and measurement');
  const latencies = done.filter((r) => r.at >= window.from! && r.at <= window.to!).map((r) => r.ms);
  latencies.sort((a, b) => a - b);
  return {
    scenario,
    rps: latencies.length / ((window.to! - window.from!) / 1000),
    requests: latencies.length,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    cpu: cpuShares(before, after, [scenario.target.server, ...settings.parties]),
  };
}

/**
 * Scenarios measured in turn, `rounds` times, each run short (`settings`' duration and warm-up);
 * every round starts one scenario later (a b c, then b c a, …), so none is always first. On shared
 * cores a machine's speed drifts by tens of percent between runs seconds apart, more than within
 * one round, so ratios taken within each round are steadier than those of runs bracketed by
 * baselines. Returns each round's measurements in the order of `scenarios`.
 */
export async function measureInTurn(
  scenarios: Scenario[],
  rounds: number,
  settings: LoadSettings,
): Promise<Measured[][]> {
  const all: Measured[][] = [];
  for (let round = 0; round < rounds; round++) {
    const measured: Measured[] = [];
    for (let i = 0; i < scenarios.length; i++) {
      const at = (round + i) % scenarios.length;
      const s = scenarios[at]!;
      measured[at] = await measure({ ...s, label: `${s.label}, round ${round + 1}` }, settings);
    }
    all.push(measured);
  }
  return all;
}

/** The server's CPU per request in ms, or undefined when its CPU was not measured. */
export function serverMsPerRequest(m: Measured): number | undefined {
  const cores = m.cpu[0]!.cores;
  return cores === null || m.rps === 0 ? undefined : (cores * 1000) / m.rps;
}

/**
 * Waits (30 s at most) until the scenario's server is idle: requests the load generator gave up on
 * when it stopped may still hold the server busy (e.g. password hashes queued in its thread pool),
 * which would otherwise be billed to the next measurement.
 */
async function drain(scenario: Scenario): Promise<void> {
  const deadline = performance.now() + 30_000;
  while (performance.now() < deadline) {
    const a = cpuSnapshot();
    await new Promise((resolve) => setTimeout(resolve, 250));
    const b = cpuSnapshot();
    if (!a || !b || coresBetween(a, b, scenario.target.server) < 0.1) return;
  }
}

export interface CheckedResponse {
  status: number;
  headers: Headers;
  text: string;
}

/**
 * One request of the scenario before loading it, to check the answer is what the scenario claims:
 * the expected status (default 200), then `check` (a problem, or null when all is well).
 */
export async function checkOnce(
  scenario: Scenario,
  check: (res: CheckedResponse) => string | null = () => null,
): Promise<CheckedResponse> {
  const r = scenario.request();
  const res = await fetch(`http://127.0.0.1:${scenario.target.port}${r.path}`, {
    method: r.method ?? 'GET',
    headers: r.headers ?? {},
    body: r.body,
  });
  const checked = { status: res.status, headers: res.headers, text: await res.text() };
  const expected = scenario.expectStatus ?? 200;
  if (checked.status !== expected)
    throw new Error(`${scenario.label}: expected ${expected}, got ${checked.status}: ${checked.text.slice(0, 500)}`);
  const problem = check(checked);
  if (problem) throw new Error(`${scenario.label}: ${problem}`);
  return checked;
}

export interface BracketedRun {
  /** In the order measured: baseline #1, scenario, baseline #2, scenario, ... */
  measured: Measured[];
  baselines: Measured[];
  byKey: Map<string, Measured>;
}

/**
 * The baseline, then each scenario followed by the baseline again: every figure is compared with
 * the baseline measured right around it, so a noisy neighbour that comes and goes during the run
 * hurts both sides of a ratio instead of only one.
 */
export async function measureBracketed(
  baseline: Scenario,
  scenarios: Scenario[],
  settings: LoadSettings,
): Promise<BracketedRun> {
  const measureBaseline = (n: number) => measure({ ...baseline, label: `${baseline.label} #${n}` }, settings);
  const baselines = [await measureBaseline(1)];
  const measured: Measured[] = [baselines[0]!];
  const byKey = new Map<string, Measured>();
  for (const scenario of scenarios) {
    const m = await measure(scenario, settings);
    const b = await measureBaseline(baselines.length + 1);
    m.baselineRps = (baselines[baselines.length - 1]!.rps + b.rps) / 2;
    baselines.push(b);
    measured.push(m, b);
    byKey.set(scenario.key, m);
  }
  return { measured, baselines, byKey };
}
