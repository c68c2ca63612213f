/**
 * What an ioredis pipeline leaves to the garbage collector. The gateway's Redis client auto-pipelines
 * (the commands of one tick go out in one write); every such batch is an ioredis `Pipeline`, and the
 * gateway's warm-login profile showed its commands, their arguments and replies moved to the old
 * space (and collected only by full collections) although each lives well under a millisecond.
 *
 *   pnpm bench:redis-pipeline
 *
 * Each case runs in a fresh Node process: 32 loops at once, each awaiting an `MGET` of three keys
 * (the login's failure counters) and sending the next, for BENCH_DURATION seconds (3) after
 * BENCH_WARMUP (1). Printed: commands a second, bytes the old space gained per command (summed rises
 * of its used size, read every 5 ms), and minor collections' time per 1,000 commands. Then the
 * cause alone, without Redis: two million objects made and dropped, 32 kept alive at a time, by a
 * constructor that defines an accessor on each instance (as ioredis's `Pipeline` defines `length`)
 * and by the same class with the accessor on its prototype. BENCH_REDIS_URL: the Redis to use
 * (default redis://127.0.0.1:6379; the keys read do not exist).
 */
import { execFileSync } from 'node:child_process';
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import Redis from 'ioredis';
import { intEnv, stringEnv } from './lib/env';
import { fmtInt, table } from './lib/report';

const SETTINGS = {
  seconds: intEnv('BENCH_DURATION', 3),
  warmup: intEnv('BENCH_WARMUP', 1),
  redisUrl: stringEnv('BENCH_REDIS_URL', 'redis://127.0.0.1:6379'),
};
const CASE_FLAG = '--case=';
const IN_FLIGHT = 32;

interface Measured {
  opsPerSecond: number;
  oldBytesPerOp: number;
  minorMsPerThousand: number;
}

/** Runs `op` from IN_FLIGHT loops, or calls it in a loop when it is synchronous, and measures the heap. */
async function measure(op: () => Promise<unknown> | void, sync: boolean): Promise<Measured> {
  let ops = 0;
  let stop = false;
  const oldSpace = () => getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')!.space_used_size;
  if (!sync) {
    const loop = async () => {
      while (!stop) {
        await op();
        ops++;
      }
    };
    for (let i = 0; i < IN_FLIGHT; i++) void loop();
    await new Promise((resolve) => setTimeout(resolve, SETTINGS.warmup * 1000));
  }
  let minorMs = 0;
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries() as Array<PerformanceEntry & { detail?: { kind?: number } }>)
      if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) minorMs += e.duration;
  });
  gc.observe({ entryTypes: ['gc'] });
  let gained = 0;
  let last = oldSpace();
  const read = () => {
    const now = oldSpace();
    if (now > last) gained += now - last;
    last = now;
  };
  const started = performance.now();
  const opsBefore = ops;
  let ms: number;
  if (sync) {
    // In slices, so that the 5 ms reads below still run between them.
    const until = started + SETTINGS.seconds * 1000;
    while (performance.now() < until) {
      for (let i = 0; i < 10_000; i++) op();
      ops += 10_000;
      read();
      await new Promise((resolve) => setImmediate(resolve));
    }
    ms = performance.now() - started;
  } else {
    const reads = setInterval(read, 5);
    await new Promise((resolve) => setTimeout(resolve, SETTINGS.seconds * 1000));
    clearInterval(reads);
    ms = performance.now() - started;
    stop = true;
  }
  read();
  gc.disconnect();
  const done = ops - opsBefore;
  return {
    opsPerSecond: (done / ms) * 1000,
    oldBytesPerOp: gained / done,
    minorMsPerThousand: (minorMs / done) * 1000,
  };
}

/** A constructor like ioredis's Pipeline's: an accessor defined on each instance, reading the instance. */
class AccessorPerInstance {
  readonly queue: number[] = [1, 2, 3, 4, 5, 6, 7, 8];
  constructor() {
    Object.defineProperty(this, 'length', { get: () => this.queue.length });
  }
}

class AccessorOnPrototype {
  readonly queue: number[] = [1, 2, 3, 4, 5, 6, 7, 8];
  get length(): number {
    return this.queue.length;
  }
}

function liveRing(make: () => object): () => void {
  const ring = new Array<object>(IN_FLIGHT);
  let at = 0;
  return () => {
    ring[at] = make();
    at = (at + 1) % IN_FLIGHT;
  };
}

const CASES: Record<string, { label: string; run: () => Promise<Measured> }> = {
  auto: {
    label: 'ioredis, enableAutoPipelining (as the gateway)',
    run: () => withRedis(true),
  },
  plain: {
    label: 'ioredis, one write per command',
    run: () => withRedis(false),
  },
  perInstance: {
    label: 'an accessor defined on each instance (no Redis)',
    run: () =>
      measure(
        liveRing(() => new AccessorPerInstance()),
        true,
      ),
  },
  onPrototype: {
    label: 'the same accessor on the prototype (no Redis)',
    run: () =>
      measure(
        liveRing(() => new AccessorOnPrototype()),
        true,
      ),
  },
};

async function withRedis(enableAutoPipelining: boolean): Promise<Measured> {
  const redis = new Redis(SETTINGS.redisUrl, { enableAutoPipelining, lazyConnect: true });
  await redis.connect();
  const keys = ['bench-pipeline:a', 'bench-pipeline:b', 'bench-pipeline:c'];
  try {
    return await measure(() => redis.mget(keys), false);
  } finally {
    redis.disconnect();
  }
}

async function main(): Promise<void> {
  const name = process.argv.find((a) => a.startsWith(CASE_FLAG))?.slice(CASE_FLAG.length);
  if (name) {
    process.stdout.write(JSON.stringify(await CASES[name]!.run()));
    return;
  }
  const rows = Object.entries(CASES).map(([key, { label }]) => {
    const out = execFileSync(process.execPath, [...process.execArgv, __filename, `${CASE_FLAG}${key}`], {
      encoding: 'utf8',
    });
    const m = JSON.parse(out) as Measured;
    return [label, fmtInt(m.opsPerSecond), m.oldBytesPerOp.toFixed(1), m.minorMsPerThousand.toFixed(3)];
  });
  console.log(table(['case', 'per second', 'old-space bytes gained each', 'minor GC ms per 1,000'], rows));
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
