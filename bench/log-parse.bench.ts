/**
 * The access-log reader alone: parse, classify and sum a day of generated proxy log
 * (lib/proxy-log.ts, as `pnpm bench:utilization` writes it) in this process, with no API, so its
 * CPU time is the reader's. `ingest-logs` runs the same functions per line; this leaves out
 * reading the file (the lines are read into memory first) and posting the batches.
 *
 *   pnpm bench:log-parse
 *   BENCH_PARSER=<path of an access-log.ts, from bench/> pnpm bench:log-parse   (another version of it)
 *
 * Settings: BENCH_LOG_LINES (300,000), BENCH_ACCOUNTS (100,000), BENCH_PARSE_RUNS (3). Each run
 * prints wall and CPU time and lines per CPU second, the figure to compare on a shared machine.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { intEnv, stringEnv } from './lib/env';
import { fmtInt } from './lib/report';
import { writeProxyLog } from './lib/proxy-log';
import { parseNetworks } from '../packages/cli/src/utilization/networks';
import type * as AccessLog from '../packages/cli/src/utilization/access-log';

const SETTINGS = {
  lines: intEnv('BENCH_LOG_LINES', 300_000),
  accounts: intEnv('BENCH_ACCOUNTS', 100_000),
  runs: intEnv('BENCH_PARSE_RUNS', 3),
  parser: stringEnv('BENCH_PARSER', '../packages/cli/src/utilization/access-log'),
};
/** Lines per batch, as ingest-logs cuts them. */
const BATCH_LINES = 20_000;

async function main(): Promise<void> {
  const reader = (await import(SETTINGS.parser)) as Partial<typeof AccessLog> &
    Pick<typeof AccessLog, 'parseAccessLine' | 'BatchBuilder'>;
  const dir = mkdtempSync(join(tmpdir(), 'cairn-bench-parse-'));
  const file = join(dir, 'proxy-access.log');
  try {
    await writeProxyLog({
      file,
      lines: SETTINGS.lines,
      accounts: SETTINGS.accounts,
      accountName: (i) => `AUTH_w${String(i).padStart(7, '0')}`,
      dayStartMs: Date.UTC(2026, 10, 27),
    });
    const lines = readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l !== '');
    const networks = parseNetworks('10.0.0.0/8,fd00::/8');
    console.log(`log reader: ${fmtInt(lines.length)} lines, ${fmtInt(SETTINGS.accounts)} accounts, ${SETTINGS.parser}`);
    for (let run = 1; run <= SETTINGS.runs; run++) {
      // Versions before request classes have no copy tracker and no internal networks.
      const copies = reader.CopyTracker ? new reader.CopyTracker() : null;
      let requests = 0;
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      let builder = new reader.BatchBuilder(1);
      for (const line of lines) {
        const parsed = reader.parseAccessLine(line);
        let record = parsed.kind === 'record' ? parsed.record : null;
        if (parsed.kind === 'skipped' && parsed.copySource) copies?.sawSource(parsed.copySource);
        let internal = false;
        if (record) {
          requests++;
          if (copies) {
            record = copies.classify(record);
            internal = networks.contains(record.remoteAddr);
          }
        }
        builder.addLine(line, record, internal);
        if (builder.lineCount >= BATCH_LINES) {
          builder.build();
          builder = new reader.BatchBuilder(1);
        }
      }
      builder.build();
      const seconds = (performance.now() - t0) / 1000;
      const cpu = process.cpuUsage(cpu0);
      const cpuSeconds = (cpu.user + cpu.system) / 1e6;
      console.log(
        `  run ${run}: ${fmtInt(requests)} requests; ${seconds.toFixed(2)} s, ${cpuSeconds.toFixed(2)} s CPU: ${fmtInt(lines.length / seconds)} lines/s, ${fmtInt(lines.length / cpuSeconds)} lines per CPU second`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
