import { defineConfig } from 'vite';

// Served by the management API under /console/ (services/management-api/src/http/console.ts).
export default defineConfig({
  base: '/console/',
  // Preact's JSX through esbuild's automatic runtime: no framework plugin needed for a build.
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
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
