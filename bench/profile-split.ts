/**
 * Splits a V8 CPU profile (a `.cpuprofile` from a benchmark run with BENCH_CPU_PROF) into the parts
 * of a request's cost: each sample is charged to the innermost frame of its stack that belongs to a
 * known part, walking out from the running function, so that a library's callbacks into Cairn's
 * code count as Cairn's and Cairn's calls into a library count as the library's. Idle time and
 * start-up (module loading) are left out.
 *
 *   pnpm bench:profile-split <file.cpuprofile> [requests served while profiled]
 *
 * With the request count, each part is also given in milliseconds per request. docs/benchmarks.md
 * uses it for the warm V1 login beside its bare handler.
 */
import { existsSync, readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Frames whose presence anywhere in a stack marks start-up work, not serving. */
const START_UP = [
  'evaluate',
  'Module._load',
  'compileSourceTextModule',
  'wrapSafe',
  'makeSyncRequest',
  'waitForWorker',
];

/** The parts, in the order a frame is tested against them. */
const PARTS: Array<[string, (f: CallFrame) => boolean]> = [
  ['garbage collector', (f) => f.functionName === '(garbage collector)'],
  ['Redis client (ioredis)', (f) => /\/(ioredis|redis-errors|denque|cluster-key-slot)\//.test(f.url)],
  ['request log (pino)', (f) => /\/(pino[^/]*|@pinojs\/[^/]+|sonic-boom)\//.test(f.url)],
  [
    'hashing and signing (node:crypto)',
    (f) =>
      f.url === 'node:crypto' || f.url.startsWith('node:internal/crypto') || /\/(jsonwebtoken|jws|jwa)\//.test(f.url),
  ],
  ["Cairn's own code", (f) => f.url.startsWith('file://') && !f.url.includes('/node_modules/')],
  [
    'HTTP, express and middleware',
    (f) =>
      /\/(express|router|finalhandler|on-finished)\//.test(f.url) ||
      /^node:(_http|net|events|internal\/streams|internal\/stream_base)/.test(f.url),
  ],
];

function main(): void {
  const [file, requestsArg] = process.argv.slice(2);
  const refuse = (sentence: string): never => {
    console.error(sentence);
    process.exit(2);
  };
  if (!file) return refuse('usage: pnpm bench:profile-split <file.cpuprofile> [requests]');
  // pnpm runs the script in bench/, so a path relative to where it was typed is not found there.
  if (!existsSync(file)) return refuse(`${file}: no such file (pnpm runs this in bench/: give an absolute path)`);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

  const selfMicros = new Map<number, number>();
  profile.samples.forEach((id, i) => selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

  const parts = new Map<string, number>();
  let busy = 0;
  for (const [id, micros] of selfMicros) {
    const leaf = byId.get(id)!.callFrame;
    if (leaf.functionName === '(idle)' || leaf.functionName === '(program)') continue;
    const stack: CallFrame[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) stack.push(byId.get(at)!.callFrame);
    if (
      stack.some((f) => START_UP.includes(f.functionName) || (f.functionName === 'run' && f.url.includes('module_job')))
    )
      continue;
    const part = stack.map((f) => PARTS.find(([, test]) => test(f))?.[0]).find((p) => p !== undefined) ?? 'other';
    parts.set(part, (parts.get(part) ?? 0) + micros);
    busy += micros;
  }

  const requests = requestsArg ? Number(requestsArg) : undefined;
  console.log(`busy ${(busy / 1000).toFixed(0)} ms (start-up and idle left out)`);
  for (const [part, micros] of [...parts].sort((a, b) => b[1] - a[1])) {
    const perRequest = requests ? `  ${(micros / 1000 / requests).toFixed(3)} ms/request` : '';
    console.log(`${((100 * micros) / busy).toFixed(1).padStart(5)} %  ${part}${perRequest}`);
  }
}

main();
