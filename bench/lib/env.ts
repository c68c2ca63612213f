/** Benchmark settings from the environment: unset or empty means the default. */

export function intEnv(name: string, fallback: number, min = 1): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}, got '${raw}'`);
  return n;
}

export function stringEnv(name: string, fallback: string): string;
export function stringEnv(name: string, fallback?: undefined): string | undefined;
export function stringEnv(name: string, fallback?: string): string | undefined {
  return process.env[name] || fallback;
}

/** How long and how hard each scenario is loaded: the same variables in every benchmark. */
export interface LoadEnv {
  /** BENCH_DURATION: seconds measured per scenario (default 10). */
  duration: number;
  /** BENCH_WARMUP: seconds of unmeasured warm-up before each scenario (default 3). */
  warmup: number;
  /** BENCH_CONNECTIONS: concurrent autocannon connections. */
  connections: number;
}

export function loadEnv(defaultConnections: number): LoadEnv {
  return {
    duration: intEnv('BENCH_DURATION', 10),
    warmup: intEnv('BENCH_WARMUP', 3, 0),
    connections: intEnv('BENCH_CONNECTIONS', defaultConnections),
  };
}
