import { createHook } from 'node:async_hooks';
import { closeRedis } from '../src/redis';
import { testRedis } from './support/redis';

describe('closeRedis', () => {
  it('when a connected client is closed, then no timer it started is left to hold the process open', async () => {
    // Timers created from here on, until each is cleared or has fired.
    const live = new Set<number>();
    const hook = createHook({
      init: (id, type) => void (type === 'Timeout' && live.add(id)),
      destroy: (id) => void live.delete(id),
    }).enable();
    try {
      const redis = testRedis();
      await redis.set(`cairn:test-close-redis-${process.pid}`, 'x', 'EX', 5);
      await closeRedis(redis);
      expect(redis.status).toBe('end');
      // destroy hooks run once the timer list is processed: one turn of the event loop.
      await new Promise((resolve) => setImmediate(resolve));
      expect(live.size).toBe(0);
    } finally {
      hook.disable();
    }
  });
});
