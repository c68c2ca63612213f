/**
 * Entry point shared by the benchmarks: in a forked child, serve the role it was started for; in
 * the parent, run the benchmark, undo its setup in reverse order (also on Ctrl-C / SIGTERM), and
 * exit non-zero only when something is broken.
 */
import { BASELINE_ROLE, childRole, serveHelloWorld } from './children';

/** Undo steps of the setup, run last-in first-out; a failing step is reported and the rest still run. */
export class Cleanups {
  private readonly steps: Array<() => Promise<void>> = [];
  private running: Promise<void> | undefined;

  push(step: () => Promise<void>): void {
    this.steps.push(step);
  }

  /** Runs every step once; a second call (Ctrl-C during the cleanup at the end) waits for the first. */
  run(): Promise<void> {
    this.running ??= this.runSteps();
    return this.running;
  }

  private async runSteps(): Promise<void> {
    while (this.steps.length) {
      try {
        await this.steps.pop()!();
      } catch (e) {
        console.error(`cleanup: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }
}

export interface Benchmark {
  /** Serves a role other than the baseline in a forked child (see children.ts). */
  serve: (role: string) => Promise<void>;
  main: (cleanups: Cleanups) => Promise<void>;
}

export function runBenchmark(bench: Benchmark): void {
  const role = childRole();
  if (role) {
    const serving = role === BASELINE_ROLE ? Promise.resolve(serveHelloWorld()) : bench.serve(role);
    serving.catch((e: unknown) => {
      console.error(e);
      process.exit(1);
    });
    return;
  }
  const cleanups = new Cleanups();
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\n${signal}: cleaning up`);
    void cleanups.run().finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const main = async () => {
    try {
      await bench.main(cleanups);
    } finally {
      // The signal handlers stay: Ctrl-C during this cleanup waits for it instead of cutting it short.
      await cleanups.run();
    }
  };
  main().then(
    () => process.exit(interrupted ? 130 : 0),
    (e: unknown) => {
      // Interrupted: the setup was pulled from under the run; the signal handler exits.
      if (interrupted) return;
      console.error(`\nBENCHMARK ERROR: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      process.exit(1);
    },
  );
}
