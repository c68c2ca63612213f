import express, { Router, type NextFunction, type Request, type Response } from 'express';
import { existsSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';

/**
 * The operators' console (packages/console), served as static files under /console/. Only these
 * answers carry the browser security headers below; the API's JSON answers keep their own.
 *
 * The CSP allows this origin only: no inline script or style, no third-party host, no framing.
 * Hashed assets (/console/assets/<name>-<hash>.js) never change, so browsers keep them a year;
 * index.html names the current hashes, so it is revalidated on every visit.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': CONSOLE_CSP,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
};

const IMMUTABLE = 'public, max-age=31536000, immutable';

/** Where `pnpm build` put the console: @cairn/console's dist/, or undefined when it is not installed. */
export function builtConsoleDir(): string | undefined {
  try {
    return join(dirname(require.resolve('@cairn/console/package.json')), 'dist');
  } catch {
    return undefined;
  }
}

const secure = (res: Response) => res.set(SECURITY_HEADERS);

/** A built asset's path: one directory, a plain name (no way out of it), a type worth compressing. */
const COMPRESSIBLE_ASSET = /^\/assets\/[\w.-]+\.(?:js|css|svg)$/;
/** The copies the console's build writes beside each asset (packages/console/vite.config.mjs), best first. */
const PRECOMPRESSED = [
  { encoding: 'br', suffix: '.br' },
  { encoding: 'gzip', suffix: '.gz' },
] as const;

/**
 * A compressed copy of a built asset when the browser accepts its encoding (Accept-Encoding, with
 * its q-values) and the build wrote one; otherwise the plain file, from express.static after it.
 * Either way the answer varies by Accept-Encoding, so a cache keeps them apart.
 */
function precompressed(dir: string) {
  return (req: Request, res: Response, next: NextFunction) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !COMPRESSIBLE_ASSET.test(req.path)) return next();
    res.vary('Accept-Encoding');
    const available = PRECOMPRESSED.filter((p) => existsSync(join(dir, `${req.path}${p.suffix}`)));
    const chosen =
      available.length > 0 ? req.acceptsEncodings([...available.map((p) => p.encoding), 'identity']) : false;
    const copy = available.find((p) => p.encoding === chosen);
    if (!copy) return next();
    res.set({ 'Content-Encoding': copy.encoding, 'Cache-Control': IMMUTABLE }).type(extname(req.path));
    res.sendFile(
      `${req.path.slice(1)}${copy.suffix}`,
      { root: dir, dotfiles: 'ignore', cacheControl: false },
      (err) => {
        // Gone since it was looked for: the plain file (or the console's 404), not a compressed header on it.
        if (err && !res.headersSent) {
          res.removeHeader('Content-Encoding');
          next();
        }
      },
    );
  };
}

/** `dir`: the console's built files (index.html, assets/); absent or unbuilt → a 503 that says so. */
export function consoleRouter(dir: string | undefined): Router {
  const router = Router({ strict: true });
  const index = dir && join(dir, 'index.html');
  const built = () => !!index && existsSync(index);

  router.use((req, res, next) => {
    secure(res);
    if (built()) return next();
    res
      .status(503)
      .type('text/plain')
      .set('Cache-Control', 'no-store')
      .send(
        'The console has not been built. Run `pnpm build` (or `node scripts/build.mjs packages/console`) and reload.\n',
      );
  });
  router.get('/', (req, res) => {
    if (!req.originalUrl.split('?')[0]!.endsWith('/')) return res.redirect(301, '/console/');
    res.set('Cache-Control', 'no-cache').sendFile(index as string);
  });
  if (dir) router.use(precompressed(dir));
  router.use(
    express.static(dir ?? '.', {
      index: false,
      redirect: false,
      dotfiles: 'ignore',
      fallthrough: true,
      setHeaders: (res, path) => {
        res.setHeader('Cache-Control', /[\\/]assets[\\/]/.test(path) ? IMMUTABLE : 'no-cache');
      },
    }),
  );
  router.use((_req, res) => {
    res
      .status(404)
      .type('text/plain')
      .set('Cache-Control', 'no-cache')
      .send('Not found in the console. Open /console/.\n');
  });
  return router;
}
