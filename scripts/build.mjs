// `pnpm build`: compiles every workspace package's src/**/*.ts into dist/**/*.js (CommonJS, one
// output file per source file, source maps beside them), so plain `node` runs the built code:
// `node services/management-api/dist/server.js`, `packages/cli/bin/cairn`, the images.
//
//   node scripts/build.mjs [--quiet] [--node-only] [package dir]...   (default: every package and service)
//
// --node-only leaves out the browser apps (the console): what the end-to-end tests' processes run.
//
// A package whose dist/ is current (see upToDate) is skipped, so `pnpm start` builds nothing twice.
//
// esbuild transpiles each file on its own (the tsconfig has isolatedModules), exactly as tsx does
// in development; `pnpm typecheck` (tsc) stays the type checker. tsc is not the compiler because
// its output would need declaration files and project references in dependency order for the
// packages to import one another's dist/; esbuild builds the whole workspace in about a second.
//
// Imports are left as they are: a relative import finds its sibling in dist/, a `@cairn/*` import
// resolves through that package's `exports` to its dist/index.js, and third-party packages come from
// each package's own node_modules. Development tools ask for the `cairn-source` export condition
// instead (tsx with `--conditions=cairn-source`, jest's customExportConditions) and read src/.
//
// A package with a vite.config.mjs (packages/console, a browser app) is built by Vite instead, into
// its dist/; that build is skipped while dist/ is newer than everything it is made from, so
// `pnpm start` does not pay for it on every start.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const workspaceDirs = ['packages', 'services'].flatMap((group) =>
  readdirSync(join(root, group))
    .map((name) => join(root, group, name))
    .filter((dir) => statSync(join(dir, 'package.json'), { throwIfNoEntry: false })?.isFile()),
);

function allFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? allFiles(join(dir, e.name)) : [join(dir, e.name)],
  );
}

/** Vite's production build of a browser package, unless its dist/ is already newer than its inputs. */
function viteBuild(dir, pkg, quiet) {
  const built = statSync(join(dir, 'dist', 'index.html'), { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const inputs = [
    join(root, 'pnpm-lock.yaml'),
    ...['package.json', 'index.html', 'vite.config.mjs'].map((f) => join(dir, f)),
  ].concat(...['src', 'public'].filter((d) => existsSync(join(dir, d))).map((d) => allFiles(join(dir, d))));
  if (built > 0 && inputs.every((f) => statSync(f).mtimeMs < built)) {
    if (!quiet) process.stdout.write(`${pkg.name}: up to date -> ${relative(root, join(dir, 'dist'))}/\n`);
    return;
  }
  let vite;
  try {
    vite = join(dirname(createRequire(join(dir, 'package.json')).resolve('vite/package.json')), 'bin', 'vite.js');
  } catch {
    // An install filtered to other packages (the auth-gateway image) has no Vite: nothing needs the console there.
    process.stderr.write(
      `${pkg.name}: skipped: its dependencies are not installed (a full 'pnpm install', then 'pnpm build')\n`,
    );
    return;
  }
  const run = spawnSync(process.execPath, [vite, 'build', '--logLevel', quiet ? 'warn' : 'info'], {
    cwd: dir,
    stdio: 'inherit',
  });
  if (run.status !== 0) throw new Error(`${pkg.name}: vite build failed (exit ${run.status ?? run.signal})`);
}

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

/**
 * A package's dist/ records what it was built from: the list of its source files, in a stamp file
 * whose mtime is the moment that build started. While the list is the same and no source file,
 * its package.json, the lockfile (esbuild's version) or this script changed since, dist/ is what a
 * build would write again, and the package is skipped: `pnpm start` and `pnpm cairn` then cost no
 * build (about 3 s of CPU for the whole workspace).
 */
const STAMP = '.built-from';

function builtFrom(dir, entryPoints) {
  return JSON.stringify(entryPoints.map((f) => relative(dir, f)).sort());
}

function upToDate(dir, entryPoints) {
  const stamp = join(dir, 'dist', STAMP);
  const built = statSync(stamp, { throwIfNoEntry: false })?.mtimeMs;
  if (built === undefined || readFileSync(stamp, 'utf8') !== builtFrom(dir, entryPoints)) return false;
  const inputs = [
    ...entryPoints,
    join(dir, 'package.json'),
    join(root, 'pnpm-lock.yaml'),
    fileURLToPath(import.meta.url),
  ];
  return inputs.every((f) => statSync(f).mtimeMs < built);
}

const args = process.argv.slice(2);
const quiet = args.includes('--quiet');
const nodeOnly = args.includes('--node-only');
const wanted = args.filter((a) => !a.startsWith('--')).map((d) => resolve(d));
const targets = wanted.length > 0 ? wanted : workspaceDirs;
for (const dir of targets) {
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  if (existsSync(join(dir, 'vite.config.mjs'))) {
    if (!nodeOnly) viteBuild(dir, pkg, quiet);
    continue;
  }
  const src = join(dir, 'src');
  const entryPoints = sourceFiles(src);
  if (entryPoints.length === 0) throw new Error(`${pkg.name}: no TypeScript under ${src}`);
  if (upToDate(dir, entryPoints)) {
    if (!quiet) process.stdout.write(`${pkg.name}: up to date -> ${relative(root, join(dir, 'dist'))}/\n`);
    continue;
  }
  const started = new Date();
  // A file deleted from src/ must not live on in dist/.
  rmSync(join(dir, 'dist'), { recursive: true, force: true });
  await build({
    entryPoints,
    outbase: src,
    outdir: join(dir, 'dist'),
    bundle: false,
    platform: 'node',
    // The images run Node 22; the code still supports Node >= 20 (package.json engines).
    target: 'node20',
    format: 'cjs',
    // import() as require(), as tsc and ts-jest emit it for CommonJS: Node's own import() would
    // resolve an extensionless path the ESM way and fail (the CLI loads its host commands so).
    supported: { 'dynamic-import': false },
    sourcemap: 'linked',
    // No keepNames: one file in, one file out, nothing renamed, so classes and functions keep their
    // names as written. keepNames would wrap every function expression in a defineProperty call,
    // run each time a closure is made (0.6-0.8 us against 10-15 ns, on a request's path).
    logLevel: 'warning',
  });
  // Dated when the build started: a source saved while it ran is newer, and built again next time.
  const stamp = join(dir, 'dist', STAMP);
  writeFileSync(stamp, builtFrom(dir, entryPoints));
  utimesSync(stamp, started, started);
  if (!quiet)
    process.stdout.write(`${pkg.name}: ${entryPoints.length} files -> ${relative(root, join(dir, 'dist'))}/\n`);
}
