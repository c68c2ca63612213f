import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defaultClientConditions, defineConfig } from 'vite';

/**
 * Writes a gzip (.gz) and a Brotli (.br) copy beside every script, stylesheet and SVG of the build,
 * at the highest levels (once, at build time), which the management API sends to a browser that
 * accepts them (services/management-api/src/http/console.ts). A copy no smaller is not written.
 */
function precompress() {
  return {
    name: 'cairn-precompress',
    apply: 'build',
    writeBundle(options, bundle) {
      for (const [name, file] of Object.entries(bundle)) {
        if (!/\.(js|css|svg)$/.test(name)) continue;
        const data = Buffer.from(file.type === 'chunk' ? file.code : file.source);
        const copies = {
          gz: gzipSync(data, { level: 9 }),
          br: brotliCompressSync(data, {
            params: {
              [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
              [constants.BROTLI_PARAM_SIZE_HINT]: data.length,
            },
          }),
        };
        for (const [ext, copy] of Object.entries(copies))
          if (copy.length < data.length) writeFileSync(join(options.dir, `${name}.${ext}`), copy);
      }
    },
  };
}

// Served by the management API under /console/ (services/management-api/src/http/console.ts).
export default defineConfig({
  base: '/console/',
  // Preact's JSX through esbuild's automatic runtime: no framework plugin needed for a build.
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  plugins: [precompress()],
  // A workspace package's TypeScript source (its `cairn-source` export), as tsx and jest read it:
  // the console shares pure definitions (@cairn/domain/transfer-classes) without a build of them first.
  resolve: { conditions: ['cairn-source', ...defaultClientConditions] },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Everything as files under /console/assets/: the Content-Security-Policy allows no inline
    // scripts and no data: URLs for scripts, and hashed file names can be cached for a year.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
});
