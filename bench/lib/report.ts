/** Number formats, the results table and the PASS/FAIL lines every benchmark prints. */
import type { Measured } from './load';

export const fmtInt = (n: number): string => Math.round(n).toLocaleString('en-US');
export const fmtMs = (n: number): string => (n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : n.toFixed(0));
export const fmtPct = (n: number): string => `${(n * 100).toFixed(1)} %`;
export const fmtCores = (n: number | null): string => (n === null ? '-' : n.toFixed(2));

export interface Verdict {
  text: string;
  pass: boolean;
}

/** A target: the verdict is PASS when `pass` holds. */
export const verdict = (text: string, pass: boolean): Verdict => ({ text, pass });

export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(headers), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

/** Throughput of a scenario as a fraction of the baseline measured around it. */
export const ratio = (m: Measured): number => m.rps / m.baselineRps!;

export interface ResultsReport {
  /** First line, e.g. `Results (<date>; <settings>)`. */
  title: string;
  measured: Measured[];
  baselines: Measured[];
  /** Targets by scenario key. */
  verdicts: Map<string, Verdict[]>;
  /** Extra columns after `vs baseline`, filled per scenario (empty cells print `-`). */
  extraColumns?: Array<{ header: string; cell: (m: Measured) => string | undefined }>;
  /** Lines printed between the table and the list of missed targets. */
  notes?: string[];
}

/** Prints the results table, the notes and the missed targets; returns the misses. */
export function printResults(r: ResultsReport): string[] {
  const cpuHeader = `CPU cores: ${r.measured[0]!.cpu.map((c) => c.name).join(' / ')}`;
  const extra = r.extraColumns ?? [];
  const rows = r.measured.map((m) => {
    const v = r.verdicts.get(m.scenario.key) ?? [];
    return [
      m.scenario.label,
      fmtInt(m.rps),
      fmtMs(m.p50),
      fmtMs(m.p99),
      m.baselineRps === undefined ? '-' : fmtPct(ratio(m)),
      ...extra.map((c) => c.cell(m) ?? '-'),
      m.cpu.map((c) => fmtCores(c.cores)).join(' / '),
      v.length ? v.map((x) => `${x.pass ? 'PASS' : 'FAIL'} ${x.text}`).join('; ') : '-',
    ];
  });
  const labels = new Map(r.measured.map((m) => [m.scenario.key, m.scenario.label]));
  const misses = [...r.verdicts.entries()].flatMap(([key, vs]) =>
    vs.filter((v) => !v.pass).map((v) => `${labels.get(key) ?? key}: ${v.text}`),
  );
  const baseRps = r.baselines.map((b) => b.rps);

  console.log(r.title);
  console.log(
    `"vs baseline" divides by the mean of the two hello-world runs around the scenario; hello world ranged ` +
      `${fmtInt(Math.min(...baseRps))}..${fmtInt(Math.max(...baseRps))} req/s over the run.\n`,
  );
  console.log(
    table(
      ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'vs baseline', ...extra.map((c) => c.header), cpuHeader, 'target'],
      rows,
    ),
  );
  console.log('');
  for (const note of r.notes ?? []) console.log(note);
  if (misses.length === 0) console.log('All targets met.');
  else {
    console.log(`MISSED ${misses.length} target(s):`);
    for (const miss of misses) console.log(`  - FAIL ${miss}`);
  }
  return misses;
}
