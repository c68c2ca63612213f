import { connect } from 'node:net';
import { deflateSync, gzipSync } from 'node:zlib';
import express from 'express';
import { BodyRefused, lingerOverUnreadBodies, readBody } from '../src';
import { serve } from './serve';

const LIMIT = 1024 * 1024;

/** Answers with what readBody made of the body: its length, or why it was refused. */
function app() {
  const a = express();
  a.use(lingerOverUnreadBodies);
  a.post('/read', async (req, res) => {
    try {
      res.json({ length: (await readBody(req, LIMIT)).length });
    } catch (e) {
      if (!(e instanceof BodyRefused)) throw e;
      res.status(400).json({ reason: e.reason, message: e.message });
    }
  });
  a.post('/refuse', (_req, res) => {
    res.status(401).json({ error: 'no key' });
  });
  return a;
}

/**
 * Writes a raw request on a socket of its own and collects everything that comes back until the server ends the
 * connection.
 */
function raw(port: number, head: string, body: Buffer, keepWriting = false): Promise<{ text: string; ended: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let stop = false;
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('end', () => {
      stop = true;
      resolve({ text, ended: true });
      socket.destroy();
    });
    setTimeout(() => {
      stop = true;
      resolve({ text, ended: false });
      socket.destroy();
    }, 1500);
    socket.write(head);
    socket.write(body);
    const more = Buffer.alloc(64 * 1024, 'a');
    const pump = () => {
      while (keepWriting && !stop) if (!socket.write(more)) return void socket.once('drain', pump);
    };
    pump();
  });
}

describe('reading request bodies', () => {
  let server: Awaited<ReturnType<typeof serve>>;
  let port: number;
  beforeAll(async () => {
    server = await serve(app());
    port = Number(new URL(server.url).port);
  });
  afterAll(() => server.close());

  const post = (path: string, body: Buffer, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      body,
      headers: { 'Content-Type': 'application/json', ...headers },
    });

  it('when a body is sent gzip or deflate compressed, then it is read decompressed', async () => {
    const body = Buffer.alloc(300 * 1024, 'x');
    for (const [encoding, packed] of [
      ['gzip', gzipSync(body)],
      ['deflate', deflateSync(body)],
    ] as const) {
      const res = await post('/read', packed, { 'Content-Encoding': encoding });
      expect(await res.json()).toEqual({ length: body.length });
    }
  });

  it('when a small gzip body inflates past the limit, then it is refused as too large', async () => {
    const bomb = gzipSync(Buffer.alloc(50 * LIMIT));
    expect(bomb.length).toBeLessThan(LIMIT / 4);
    const res = await post('/read', bomb, { 'Content-Encoding': 'gzip' });
    expect(await res.json()).toEqual({
      reason: 'too-large',
      message: 'The request body is too large: this endpoint accepts at most 1 MB (counted after decompression).',
    });
  });

  it('when the encoding is unknown or the compressed data is corrupt, then it is refused saying so', async () => {
    expect(await (await post('/read', Buffer.from('{}'), { 'Content-Encoding': 'compress' })).json()).toEqual({
      reason: 'encoding',
      message: "Unsupported Content-Encoding 'compress'; send the body as it is, or as gzip, deflate or br.",
    });
    expect(await (await post('/read', Buffer.from('not gzip at all'), { 'Content-Encoding': 'gzip' })).json()).toEqual({
      reason: 'corrupt',
      message: 'The request body is not valid gzip data.',
    });
  });

  it('when a client keeps sending a large body it was refused, then it gets the answer and the end of the connection at once', async () => {
    const started = performance.now();
    const { text, ended } = await raw(
      port,
      `POST /refuse HTTP/1.1\r\nHost: x\r\nContent-Length: ${200 * LIMIT}\r\n\r\n`,
      Buffer.alloc(0),
      true,
    );
    expect(text).toMatch(/^HTTP\/1\.1 401 /);
    expect(ended).toBe(true);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('when a small body is left unread, then the connection serves the next request', async () => {
    const body = '{"a": 1}';
    const request = `POST /refuse HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const { text } = await raw(port, request + request, Buffer.alloc(0));
    expect(text.match(/HTTP\/1\.1 401 /g)).toHaveLength(2);
  });
});
