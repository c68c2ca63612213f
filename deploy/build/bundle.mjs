// Compiles a service's TypeScript entries into plain CommonJS for the container image, so the
// image runs `node dist/<entry>.js` with no TypeScript loader at runtime.
//
//   node deploy/build/bundle.mjs <service dir> <entry.ts>... (e.g. services/management-api src/server.ts src/migrate.ts)
//
// The workspace packages (@cairn/*) are bundled in: their package.json `main` points at src/*.ts,
// which plain node cannot load. Third-party packages stay external and come from the service's own
// production node_modules (`pnpm deploy --prod`): knex loads its database drivers by name, PGlite
// loads its WebAssembly next to its own files, and neither survives bundling.
//
// esbuild is not a direct dependency of the repository; it is taken from tsx, which already depends
// on it (same version as the lockfile pins), so building needs nothing beyond `pnpm install`.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';

const [serviceDir, ...entries] = process.argv.slice(2);
if (!serviceDir || entries.length === 0) {
  process.stderr.write('usage: bundle.mjs <service dir> <entry.ts>...\n');
  process.exit(2);
}
const root = resolve(serviceDir);
const requireFromService = createRequire(join(root, 'package.json'));
const esbuild = createRequire(requireFromService.resolve('tsx/package.json'))('esbuild');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

const workspacePrefix = '@cairn/';
const externalThirdParty = {
  name: 'external-third-party',
  setup(build) {
    // A bare import that is not a workspace package is resolved at runtime by node.
    build.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith(workspacePrefix) ? undefined : { path: args.path, external: true }));
  },
};

for (const entry of entries) {
  // One bundle per entry, each with only its own import graph: an entry must never pull in another
  // entry's `require.main === module` start-up code.
  const outfile = join(root, 'dist', `${basename(entry, '.ts')}.js`);
  await esbuild.build({
    entryPoints: [join(root, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    sourcemap: 'linked',
    // Stack traces keep readable function names.
    keepNames: true,
    plugins: [externalThirdParty],
    logLevel: 'warning',
  });
  process.stdout.write(`${pkg.name}: ${entry} -> ${outfile}\n`);
}
