/** What the hostile run prints: totals, endpoint groups, CPU, and the PASS/FAIL lines. */
import { loadavg } from 'node:os';
import type { CpuShare } from './cpu';
import { CLASSES, type GroupTally, type LoadResult } from './hostile-load';
import { fmtCores, fmtInt, fmtMs, table } from './report';

export const loadAverage = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/**
 * Password KDF runs so far, from the gateway's cairn_password_kdf_seconds histogram; null when
 * the gateway does not export it.
 */
export async function kdfRuns(gatewayUrl: string): Promise<number | null> {
  try {
    const res = await fetch(`${gatewayUrl}/metrics`, { signal: AbortSignal.timeout(10_000) });
    const m = /^cairn_password_kdf_seconds_count(?:\{[^}]*\})? (\d+)/m.exec(await res.text());
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** Size of a service's /metrics answer: hostile input must not grow its series without bound. */
export async function metricsSize(url: string): Promise<string> {
  try {
    const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) });
    const samples = (await res.text()).split('\n').filter((l) => l && !l.startsWith('#'));
    const families = new Map<string, number>();
    for (const l of samples) {
      const name = /^[^{ ]+/.exec(l)![0].replace(/_(bucket|sum|count)$/, '');
      families.set(name, (families.get(name) ?? 0) + 1);
    }
    const top = [...families].sort((a, b) => b[1] - a[1]).slice(0, 3);
    return `${fmtInt(samples.reduce((n, l) => n + l.length + 1, 0))} bytes, ${fmtInt(samples.length)} samples (most: ${top.map(([n, c]) => `${n} ${fmtInt(c)}`).join(', ')})`;
  } catch (e) {
    return `unavailable (${e instanceof Error ? e.message : String(e)})`;
  }
}

const row = (name: string, t: GroupTally): string[] => [
  name,
  fmtInt(t.requests),
  ...CLASSES.map((c) => fmtInt(t.byClass[c] ?? 0)),
  fmtMs(t.requests ? t.totalMs / t.requests : 0),
  fmtMs(t.maxMs),
];
const HEADERS = ['', 'requests', ...CLASSES, 'mean ms', 'max ms'];

export function printReport(
  result: LoadResult,
  extra: { cpu: CpuShare[]; kdf: number | null; metrics: string[] },
): void {
  const rps = result.all.requests / result.seconds;
  console.log(
    `\n${fmtInt(result.all.requests)} requests in ${result.seconds.toFixed(1)} s = ${fmtInt(rps)} req/s (load average now ${loadAverage()})`,
  );
  console.log(
    table(HEADERS, [...[...result.byService].sort().map(([name, t]) => row(name, t)), row('all', result.all)]),
  );
  console.log('\nby endpoint group:');
  console.log(
    table(
      HEADERS,
      [...result.byGroup].sort((a, b) => a[0].localeCompare(b[0])).map(([name, t]) => row(name, t)),
    ),
  );
  const statuses = [...result.byStatus.entries()].sort((a, b) => b[1] - a[1]);
  console.log(`\nstatuses: ${statuses.map(([s, n]) => `${s}: ${fmtInt(n)}`).join(', ')}`);
  console.log(
    `password KDF runs during the load: ${extra.kdf === null ? 'not exported by this gateway' : fmtInt(extra.kdf)}`,
  );
  for (const line of extra.metrics) console.log(line);
  console.log(
    `CPU cores during the load: ${extra.cpu.map((c) => `${c.name} ${fmtCores(c.cores)}`).join(', ')} (postgres: all backends on the machine)`,
  );
}

/** Prints the checks and the details of what failed; true when any check failed. */
export function printChecks(
  checks: Array<[string, boolean]>,
  details: string[],
  result: LoadResult,
  seed: number,
  total: number,
): boolean {
  console.log('');
  for (const [text, ok] of checks) console.log(`${ok ? 'PASS' : 'FAIL'}  ${text}`);
  for (const d of details) console.log(`  ${d}`);
  if (result.failureCount) {
    console.log(
      `\n${fmtInt(result.failureCount)} requests broke a property (replay: HOSTILE_SEED=${seed} BENCH_HOSTILE_REQUESTS=${total}); the first ${result.failures.length}:`,
    );
    for (const f of result.failures)
      console.log(`- ${f.status ?? 'no answer'}: ${f.problems.join('; ')}\n    ${f.request}`);
  }
  return checks.some(([, ok]) => !ok);
}
