import { performance } from 'node:perf_hooks';

/** One request of a race: what was asked, when it went out, when its answer came back. */
export interface Timed<T> {
  started: number;
  ended: number;
  value: T;
}

/** Runs `fn` after `delayMs` and records when it started and ended (performance.now() ms). */
export async function timed<T>(delayMs: number, fn: () => Promise<T>): Promise<Timed<T>> {
  if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
  const started = performance.now();
  const value = await fn();
  return { started, ended: performance.now(), value };
}

export function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [items.slice()];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

/** How many times each race runs (CAIRN_RACE_REPEAT, default `fallback`): the file stays under a minute. */
export const repeat = (fallback: number): number => {
  const n = Number(process.env.CAIRN_RACE_REPEAT ?? fallback);
  return Number.isInteger(n) && n > 0 ? n : fallback;
};

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
