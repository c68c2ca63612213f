import { retryStartup, scrubSecrets } from '../src';

function recorder() {
  const lines: Array<{ obj: Record<string, unknown>; msg: string }> = [];
  return {
    lines,
    log: { warn: (obj: object, msg: string) => void lines.push({ obj: obj as Record<string, unknown>, msg }) },
  };
}

describe('retryStartup', () => {
  it('when the first attempts fail, then it retries with a growing delay and returns the first success, logging each failure', async () => {
    const { lines, log } = recorder();
    const at: number[] = [];
    const result = await retryStartup(
      'postgres',
      async () => {
        at.push(Date.now());
        if (at.length < 4) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
        return 'up';
      },
      { log, deadlineMs: 10_000, firstDelayMs: 20, maxDelayMs: 80 },
    );
    expect(result).toBe('up');
    expect(at).toHaveLength(4);
    expect(lines.map((l) => l.obj.retryInMs)).toEqual([20, 40, 80]);
    expect(at[3]! - at[0]!).toBeGreaterThanOrEqual(20 + 40 + 80 - 5);
    expect(lines[0]!.msg).toBe('postgres: not available yet, retrying');
    expect(lines[0]!.obj).toMatchObject({
      step: 'postgres',
      attempt: 1,
      err: { message: 'connect ECONNREFUSED 127.0.0.1:1', code: 'ECONNREFUSED' },
    });
  });

  it('when the deadline passes, then it rethrows the last error and logs that it gave up', async () => {
    const { lines, log } = recorder();
    let n = 0;
    const started = Date.now();
    await expect(
      retryStartup('cluster', async () => Promise.reject(new Error(`missing ${++n}`)), {
        log,
        deadlineMs: 300,
        firstDelayMs: 50,
        maxDelayMs: 100,
      }),
    ).rejects.toThrow(/^missing \d+$/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(Date.now() - started).toBeLessThan(1500);
    expect(n).toBeGreaterThan(2);
    expect(lines.at(-1)!.msg).toBe('cluster: giving up');
  });

  it('when the deadline is 0, then a failure is rethrown at once without retry', async () => {
    const { lines, log } = recorder();
    let n = 0;
    await expect(
      retryStartup('x', async () => Promise.reject(new Error(`e${++n}`)), { log, deadlineMs: 0 }),
    ).rejects.toThrow('e1');
    expect(n).toBe(1);
    expect(lines).toEqual([]);
  });

  it('when an error is fatal, then it is rethrown at once', async () => {
    const { log } = recorder();
    let n = 0;
    class Fatal extends Error {}
    await expect(
      retryStartup('x', async () => Promise.reject(new Fatal(`f${++n}`)), {
        log,
        deadlineMs: 10_000,
        isFatal: (e) => e instanceof Fatal,
      }),
    ).rejects.toThrow('f1');
    expect(n).toBe(1);
  });

  it('when an error message holds a connection URL with credentials, then the logged message does not', async () => {
    const { lines, log } = recorder();
    let n = 0;
    await retryStartup(
      'redis',
      async () => {
        if (n++ === 0) throw new Error('cannot reach redis://:hunter2@cache:6379 nor postgres://cairn:s3cret@db/cairn');
      },
      { log, deadlineMs: 1000, firstDelayMs: 1 },
    );
    const logged = JSON.stringify(lines);
    expect(logged).not.toMatch(/hunter2|s3cret/);
    expect(logged).toContain('redis://[redacted]@cache:6379');
    expect(scrubSecrets('postgresql://u@h/x')).toBe('postgresql://[redacted]@h/x');
  });
});
