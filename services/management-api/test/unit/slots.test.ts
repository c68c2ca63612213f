import { Slots } from '../../src/services/slots';

describe('slots for large bodies', () => {
  it('when more tasks arrive than there are slots, then the rest wait and run in arrival order, never more at once than the slots', async () => {
    const slots = new Slots(2);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const task = (n: number) => async () => {
      running++;
      most = Math.max(most, running);
      order.push(n);
      await new Promise((r) => setTimeout(r, 10));
      running--;
      return n;
    };
    const results = await Promise.all([1, 2, 3, 4, 5].map((n) => slots.run(task(n))));
    expect(results).toEqual([1, 2, 3, 4, 5]);
    expect(order).toEqual([1, 2, 3, 4, 5]);
    expect(most).toBe(2);
  });

  it('when a task fails, then its slot passes on to the next', async () => {
    const slots = new Slots(1);
    const failed = slots.run(() => Promise.reject(new Error('refused')));
    const next = slots.run(() => Promise.resolve('ran'));
    await expect(failed).rejects.toThrow('refused');
    await expect(next).resolves.toBe('ran');
  });
});
