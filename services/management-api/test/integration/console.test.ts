import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { get, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import request from 'supertest';
import { createApp } from '../../src/app';
import { CONSOLE_CSP } from '../../src/http/console';
import { ADMIN_AUTH, startTestApp, type TestApp } from '../support/harness';

/** The console's static files: served under /console/ with browser security headers on those answers only. */
describe('console files', () => {
  let app: TestApp;
  let dir: string;
  const servers: Server[] = [];
  const listen = async (consoleDir: string | undefined) => {
    const server = await new Promise<Server>((resolve) => {
      const s = createApp({ ...app.deps, consoleDir }).listen(0, '127.0.0.1', () => resolve(s));
    });
    servers.push(server);
    return server;
  };
  const serve = async (consoleDir: string | undefined) => request(await listen(consoleDir));
  /** A GET over plain node:http, so the body arrives as sent (no client decompresses it). */
  const raw = (server: Server, path: string, headers: Record<string, string>) =>
    new Promise<{ res: IncomingMessage; body: Buffer }>((resolve, reject) => {
      const { port } = server.address() as AddressInfo;
      get({ host: '127.0.0.1', port, path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ res, body: Buffer.concat(chunks) }));
      }).on('error', reject);
    });
  /** A script worth compressing, with the copies the console's build writes beside it. */
  const SCRIPT = `export const rows = [${Array.from({ length: 2000 }, (_, i) => `{ id: ${i}, name: "row ${i}" }`).join(', ')}];\n`;

  beforeAll(async () => {
    app = await startTestApp('pglite');
    dir = mkdtempSync(join(tmpdir(), 'cairn-console-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(
      join(dir, 'index.html'),
      '<!doctype html><title>Cairn console</title><script type="module" src="/console/assets/index-AbC123.js"></script>',
    );
    writeFileSync(join(dir, 'assets', 'index-AbC123.js'), 'console.log("hi")');
    writeFileSync(join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    writeFileSync(join(dir, 'assets', 'big-XyZ789.js'), SCRIPT);
    writeFileSync(join(dir, 'assets', 'big-XyZ789.js.gz'), gzipSync(SCRIPT, { level: 9 }));
    writeFileSync(join(dir, 'assets', 'big-XyZ789.js.br'), brotliCompressSync(SCRIPT));
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    rmSync(dir, { recursive: true, force: true });
    await app.close();
  });

  it('when / is asked for, then it redirects to /console/', async () => {
    const http = await serve(dir);
    const res = await http.get('/');
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/console/');
  });

  it('when /console/ is asked for, then index.html comes back uncached with a strict CSP and the security headers', async () => {
    const http = await serve(dir);
    const res = await http.get('/console/');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('<title>Cairn console</title>');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).not.toMatch(/unsafe|https?:|\*/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['cross-origin-opener-policy']).toBe('same-origin');
    expect(res.headers['cross-origin-resource-policy']).toBe('same-origin');
    expect(res.headers['permissions-policy']).toBe('camera=(), microphone=(), geolocation=(), payment=(), usb=()');
    expect(res.headers['x-powered-by']).toBeUndefined();
  });

  it('when /console is asked for without the slash, then it redirects to /console/', async () => {
    const res = await (await serve(dir)).get('/console');
    expect(res.status).toBe(301);
    expect(res.headers.location).toBe('/console/');
  });

  it('when a hashed asset is asked for, then it may be cached for a year; other files are revalidated', async () => {
    const http = await serve(dir);
    const js = await http.get('/console/assets/index-AbC123.js');
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toMatch(/javascript/);
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const icon = await http.get('/console/favicon.svg');
    expect(icon.status).toBe(200);
    expect(icon.headers['cache-control']).toBe('no-cache');
  });

  it('when a browser accepts gzip or Brotli, then an asset comes compressed from its precompressed copy, varying by Accept-Encoding', async () => {
    const server = await listen(dir);
    const path = '/console/assets/big-XyZ789.js';
    const gzip = await raw(server, path, { 'Accept-Encoding': 'gzip, deflate' });
    expect(gzip.res.statusCode).toBe(200);
    expect(gzip.res.headers['content-encoding']).toBe('gzip');
    expect(gzip.res.headers['content-type']).toMatch(/^text\/javascript|^application\/javascript/);
    expect(gzip.res.headers.vary).toMatch(/Accept-Encoding/i);
    expect(gzip.res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(gzip.res.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(gunzipSync(gzip.body).toString()).toBe(SCRIPT);
    expect(gzip.body.length).toBeLessThan(SCRIPT.length / 3);
    const br = await raw(server, path, { 'Accept-Encoding': 'br' });
    expect(br.res.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.body).toString()).toBe(SCRIPT);
    // The client's preferences (q-values) count: gzip refused, Brotli not offered → the plain file.
    const plain = await raw(server, path, { 'Accept-Encoding': 'gzip;q=0, identity' });
    expect(plain.res.headers['content-encoding']).toBeUndefined();
    expect(plain.res.headers.vary).toMatch(/Accept-Encoding/i);
    expect(plain.body.toString()).toBe(SCRIPT);
    const none = await raw(server, path, {});
    expect(none.res.headers['content-encoding']).toBeUndefined();
    expect(none.body.toString()).toBe(SCRIPT);
    // An asset without copies is sent as it is, whatever the browser accepts.
    const small = await raw(server, '/console/assets/index-AbC123.js', { 'Accept-Encoding': 'gzip, br' });
    expect(small.res.headers['content-encoding']).toBeUndefined();
    expect(small.body.toString()).toBe('console.log("hi")');
    // Nothing outside assets/ is looked for, however the name is spelled.
    const escape = await raw(server, '/console/assets/..%2f..%2fetc%2fpasswd.js', { 'Accept-Encoding': 'gzip' });
    expect(escape.res.headers['content-encoding']).toBeUndefined();
    expect([400, 403, 404]).toContain(escape.res.statusCode);
  });

  it('when a file the console does not have is asked for, then 404 with the console headers, and no file outside it leaks', async () => {
    const http = await serve(dir);
    const missing = await http.get('/console/assets/nope-000.js');
    expect(missing.status).toBe(404);
    expect(missing.headers['content-security-policy']).toBe(CONSOLE_CSP);
    const escape = await http.get('/console/..%2f..%2fetc%2fpasswd');
    expect([400, 403, 404]).toContain(escape.status);
    expect(escape.text).not.toContain('root:');
  });

  it('when the API is asked for, then its JSON answers carry none of the console headers', async () => {
    const http = await serve(dir);
    const res = await http.get('/api/v1/clusters/').set('Authorization', ADMIN_AUTH);
    expect(res.status).toBe(200);
    expect(res.headers['content-security-policy']).toBeUndefined();
    expect(res.headers['x-frame-options']).toBeUndefined();
    expect(res.headers['cross-origin-opener-policy']).toBeUndefined();
    expect(res.headers['permissions-policy']).toBeUndefined();
  });

  it('when the console has not been built, then /console/ answers 503 saying how to build it', async () => {
    for (const consoleDir of [undefined, join(dir, 'nothing-here')]) {
      const res = await (await serve(consoleDir)).get('/console/');
      expect(res.status).toBe(503);
      expect(res.text).toMatch(/not been built.*pnpm build/);
      expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
    }
  });
});
