import express from 'express';
import { checkReadiness, NotReady, ReadyAs, readinessEndpoint } from '../src';
import { serve } from './serve';

const never = () => new Promise<never>(() => {});

describe('readiness', () => {
  it('when every dependency answers, then the report is ok and names each one ok', async () => {
    const report = await checkReadiness({
      postgres: async () => 1,
      redis: { fixed: 'not configured (in-process store)' },
    });
    expect(report).toEqual({
      ready: true,
      body: { status: 'ok', postgres: 'ok', redis: 'not configured (in-process store)' },
    });
  });

  it('when one dependency fails, then the report is unavailable and names that one unreachable', async () => {
    const report = await checkReadiness({
      postgres: async () => 1,
      redis: async () => Promise.reject(new Error('ECONNREFUSED')),
    });
    expect(report).toEqual({ ready: false, body: { status: 'unavailable', postgres: 'ok', redis: 'unreachable' } });
  });

  it('when a check answers NotReady, then the report is unavailable and names that one with the status given', async () => {
    const report = await checkReadiness({
      postgres: async () => 1,
      cluster: async () => Promise.reject(new NotReady('deleted')),
    });
    expect(report).toEqual({ ready: false, body: { status: 'unavailable', postgres: 'ok', cluster: 'deleted' } });
  });

  it('when a check answers ReadyAs, then it is ready and named with the status given; any other answer is ok', async () => {
    const report = await checkReadiness({
      redis: async () => 'PONG',
      standby: async () => new ReadyAs('ok, lag 0.4 s'),
    });
    expect(report).toEqual({ ready: true, body: { status: 'ok', redis: 'ok', standby: 'ok, lag 0.4 s' } });
  });

  it('when a check throws synchronously, then it is unreachable, not an exception', async () => {
    const report = await checkReadiness({
      postgres: () => {
        throw new Error('boom');
      },
    });
    expect(report.body).toEqual({ status: 'unavailable', postgres: 'unreachable' });
  });

  it('when a dependency never answers, then the probe still answers within its timeout, naming it unreachable', async () => {
    const started = Date.now();
    const report = await checkReadiness({ postgres: async () => 1, redis: never }, 300);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(report.body).toEqual({ status: 'unavailable', postgres: 'ok', redis: 'unreachable' });
  });

  it('when /readyz is served over HTTP, then it answers 200 or 503 with the report and no caching', async () => {
    let redisUp = true;
    const app = express();
    app.get(
      '/readyz',
      readinessEndpoint({ postgres: async () => 1, redis: () => (redisUp ? Promise.resolve() : never()) }, 300),
    );
    const s = await serve(app);
    try {
      const ok = await fetch(`${s.url}/readyz`);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('cache-control')).toBe('no-store');
      expect(await ok.json()).toEqual({ status: 'ok', postgres: 'ok', redis: 'ok' });
      redisUp = false;
      const down = await fetch(`${s.url}/readyz`);
      expect(down.status).toBe(503);
      expect(await down.json()).toEqual({ status: 'unavailable', postgres: 'ok', redis: 'unreachable' });
    } finally {
      await s.close();
    }
  });
});
