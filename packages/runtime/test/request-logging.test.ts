import express from 'express';
import pino from 'pino';
import { LogCapture, requestIdOf, requestLogger, requestLogging, type RequestIdOptions } from '../src';
import { serve } from './serve';

const OPTIONS: RequestIdOptions = {
  accept: ['x-request-id', 'x-trans-id'],
  pattern: /^[\w.-]{1,128}$/,
  generate: () => `gen-${Math.random().toString(16).slice(2)}`,
  echo: ['X-Request-Id', 'X-Openstack-Request-Id'],
};

/** An app whose one route writes a log line of its own through requestLogger, as the error handlers do. */
async function start(level: 'info' | 'warn') {
  const out = new LogCapture();
  const log = pino({ level }, out);
  const app = express();
  app.use(requestLogging(log, OPTIONS));
  app.get('/work', (req, res) => {
    requestLogger(req, log).warn({ step: 'inside' }, 'something worth a warning');
    res.json({ id: requestIdOf(req) });
  });
  return { out, ...(await serve(app)) };
}

const parsed = (out: LogCapture) =>
  out.lines.map((l) => JSON.parse(l) as { msg: string; req?: { id?: string; url?: string } });

describe.each(['info', 'warn'] as const)('request ids at log level %s', (level) => {
  let s: Awaited<ReturnType<typeof start>>;
  beforeEach(async () => {
    s = await start(level);
  });
  afterEach(() => s.close());

  it('when the caller sends X-Request-Id, then it is echoed in every configured header and is on every log line of the request', async () => {
    const res = await fetch(`${s.url}/work?secret=1`, { headers: { 'X-Request-Id': 'lb-abc.123' } });
    expect(res.headers.get('x-request-id')).toBe('lb-abc.123');
    expect(res.headers.get('x-openstack-request-id')).toBe('lb-abc.123');
    expect(await res.json()).toEqual({ id: 'lb-abc.123' });
    const lines = parsed(s.out);
    expect(lines.length).toBe(level === 'info' ? 2 : 1); // at info, also the request's completion line
    for (const line of lines) expect(line.req?.id).toBe('lb-abc.123');
    expect(s.out.text).not.toContain('secret=1');
  });

  it('when the caller sends only X-Trans-Id, then that id is used', async () => {
    const res = await fetch(`${s.url}/work`, { headers: { 'X-Trans-Id': 'tx0123456789abcdef01234-0065000000' } });
    expect(res.headers.get('x-request-id')).toBe('tx0123456789abcdef01234-0065000000');
  });

  it('when the caller sends a malformed id, then it is replaced by a generated one (no header or log injection)', async () => {
    const res = await fetch(`${s.url}/work`, { headers: { 'X-Request-Id': 'a b"}{', 'X-Trans-Id': 'x'.repeat(129) } });
    const id = res.headers.get('x-request-id')!;
    expect(id).toMatch(/^gen-[0-9a-f]+$/);
    for (const line of parsed(s.out)) expect(line.req?.id).toBe(id);
  });

  it('when the caller sends nothing, then every request gets its own new id', async () => {
    const a = (await fetch(`${s.url}/work`)).headers.get('x-request-id');
    const b = (await fetch(`${s.url}/work`)).headers.get('x-request-id');
    expect(a).toMatch(/^gen-/);
    expect(b).toMatch(/^gen-/);
    expect(a).not.toBe(b);
  });
});

describe('the request log line', () => {
  it("when an answer carries a token header, then the request's line holds its status only, not its headers", async () => {
    const out = new LogCapture();
    const app = express();
    app.use(requestLogging(pino({ level: 'info' }, out), OPTIONS));
    app.get('/auth/v1.0', (_req, res) => {
      res.setHeader('X-Auth-Token', 'tok-in-a-header');
      res.status(200).end();
    });
    const s = await serve(app);
    try {
      expect((await fetch(`${s.url}/auth/v1.0`)).status).toBe(200);
      const [line] = out.lines.map((l) => JSON.parse(l) as { res?: unknown; req?: unknown });
      expect(line?.res).toEqual({ statusCode: 200 });
      expect(line?.req).toMatchObject({ method: 'GET', url: '/auth/v1.0' });
      expect(out.text).not.toContain('tok-in-a-header');
    } finally {
      await s.close();
    }
  });
});
