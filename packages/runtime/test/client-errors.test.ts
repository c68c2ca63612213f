import { connect } from 'node:net';
import express from 'express';
import { serve } from './serve';

/** Writes `raw` on a fresh connection and collects everything the server sends until it closes. */
function exchange(port: number, raw: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    socket.on('data', (d) => (got += d.toString('latin1')));
    socket.on('error', () => resolve(got));
    socket.on('close', () => resolve(got));
    socket.on('connect', () => socket.write(raw));
    setTimeout(() => reject(new Error(`no close; got ${JSON.stringify(got)}`)), 5000).unref();
  });
}

describe('answers to requests the HTTP parser refuses', () => {
  const app = express();
  // Answers only after a while, so a malformed body arrives while its response is under way.
  app.post('/slow', (_req, res) => void setTimeout(() => res.end('slow answer'), 300));
  app.get('/', (_req, res) => res.end('ok'));
  let server: Awaited<ReturnType<typeof serve>>;
  let port: number;
  beforeAll(async () => {
    server = await serve(app);
    port = Number(new URL(server.url).port);
  });
  afterAll(() => server.close());

  it('when a request has a malformed header, then the answer is a 400 in the JSON error shape', async () => {
    const got = await exchange(port, 'GET / HTTP/1.1\r\nHost: x\r\nBad\0Header: 1\r\n\r\n');
    expect(got).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(got).toContain('"error":"Malformed HTTP request: invalid characters in a header');
  });

  it('when a body turns malformed while its response is under way, then no second answer is written into it', async () => {
    const got = await exchange(port, 'POST /slow HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n');
    expect(got).not.toContain('400 Bad Request');
  });
});
