const { spawnSync } = require('node:child_process');
const { join } = require('node:path');

/**
 * jest globalSetup of the end-to-end suites: `pnpm build` (without the console), so the processes
 * the tests start run the compiled dist/, as the images do (see nodeCommand in processes.ts). It
 * also makes them start in a fraction of a second instead of transpiling the TypeScript on every
 * start. esbuild rebuilds the whole workspace in about a second, so a dist/ is never stale.
 */
module.exports = async function buildDist() {
  const root = join(__dirname, '..', '..');
  const run = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--quiet', '--node-only'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (run.status !== 0)
    throw new Error(`pnpm build failed (exit ${run.status ?? run.signal}); the e2e tests run dist/`);
};
