/**
 * Imported-hash flood: how long another user's login takes while wrong-password logins of an
 * imported user with a costly hash run at once, and what they cost the gateway's memory. The
 * services run in this process (test-e2e's stack: real Postgres and Redis); the imported user's
 * hash is written to the database directly, as an older version could have stored it.
 *
 *   pnpm --filter @cairn/bench run bench:imported-hash
 *
 * Environment (all optional):
 *   BENCH_FLOOD_HASHES    space-separated passlib scrypt parameters to try (default
 *                         "ln=15,r=8,p=12 ln=17,r=16,p=16": at the bound, and far past it)
 *   BENCH_FLOOD_PARALLEL  wrong-password logins sent at once (default 4)
 *
 * A benchmark, not a test: it prints, it asserts nothing.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { startStack } from '../test-e2e/support/stack';
import { login } from '../test-e2e/security/client';
import { intEnv, stringEnv } from './lib/env';
import { median } from './lib/load';

const HASHES = stringEnv('BENCH_FLOOD_HASHES', 'ln=15,r=8,p=12 ln=17,r=16,p=16').split(/\s+/).filter(Boolean);
const PARALLEL = intEnv('BENCH_FLOOD_PARALLEL', 4);
const PW = 'flood-benchmark-password-not-a-secret';

const b64 = (n: number) => randomBytes(n).toString('base64').replace(/=+$/, '');

async function main() {
  // Production's scrypt for the other user; no verify cache, so every login of it runs scrypt.
  const stack = await startStack({
    redis: true,
    logLevel: 'silent',
    gateway: { failureLimit: 100_000, addressFailureLimit: 100_000, userFailureLimit: 100_000, verifyCacheSeconds: 0 },
  });
  try {
    await stack.createUser('other', PW);
    const other = async () => {
      const started = performance.now();
      const answer = await login(stack.gatewayUrl, 'v1', 'other', PW, { from: '127.0.30.1' });
      if (answer.status !== 200) throw new Error(`other: ${answer.status}`);
      return (performance.now() - started) / 1000;
    };
    await other();
    const idle = median([await other(), await other(), await other()]);
    console.log(`other user's login, idle: ${idle.toFixed(2)} s (median of 3)`);
    for (const params of HASHES) {
      const name = `imp-${params.replace(/\W/g, '')}`.slice(0, 30);
      const { id } = await stack.createUser(name, PW);
      await stack
        .db('storage_users')
        .where({ id })
        .update({ password_hash: `$scrypt$${params}$${b64(16)}$${b64(32)}` });
      global.gc?.();
      const rssBefore = process.memoryUsage().rss;
      let rssPeak = rssBefore;
      const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 20);
      const started = performance.now();
      const flood = Array.from({ length: PARALLEL }, (_, i) =>
        login(stack.gatewayUrl, 'v1', name, `wrong-${i}`, { from: `127.0.31.${i + 1}` }).then((a) => ({
          status: a.status,
          seconds: (performance.now() - started) / 1000,
        })),
      );
      // Let the flood reach the gateway first.
      await new Promise((r) => setTimeout(r, 100));
      const during = await other();
      const floods = await Promise.all(flood);
      clearInterval(sampler);
      console.log(
        `${params}: ${PARALLEL} wrong-password logins at once: statuses ${floods.map((f) => f.status).join(',')}, ` +
          `last answered after ${Math.max(...floods.map((f) => f.seconds)).toFixed(2)} s; ` +
          `other user's login meanwhile ${during.toFixed(2)} s; RSS ${Math.round(rssBefore / 2 ** 20)} -> peak ${Math.round(rssPeak / 2 ** 20)} MiB`,
      );
    }
  } finally {
    await stack.close();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
