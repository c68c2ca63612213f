const { spawnSync } = require('node:child_process');
const { join } = require('node:path');

/**
 * `pnpm build` without the console (scripts/build.mjs --node-only), so that processes started from
 * a test or a benchmark run the compiled dist/, as the images do (see nodeCommand in processes.ts),
 * and start in a fraction of a second instead of transpiling the TypeScript on every start. esbuild
 * rebuilds the whole workspace in about a second, so a dist/ is never stale. Throws when the build
 * fails; `needs` says what needed it.
 */
function buildNodeDist(needs) {
  const root = join(__dirname, '..', '..');
  const run = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--quiet', '--node-only'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (run.status !== 0) throw new Error(`pnpm build failed (exit ${run.status ?? run.signal}); ${needs}`);
}

/** jest globalSetup of the end-to-end suites. */
module.exports = async function buildDist() {
  buildNodeDist('the e2e tests run dist/');
};
module.exports.buildNodeDist = buildNodeDist;
