import pLimit from 'p-limit';

/**
 * `items.map(fn)` with at most `concurrency` calls of `fn` in flight (p-limit); results keep the
 * input order. Rejects with the first error `fn` throws (callers that must not fail catch inside `fn`).
 */
export async function mapConcurrent<T, R>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new RangeError(`concurrency must be a positive integer (got ${concurrency})`);
  const limit = pLimit(concurrency);
  return Promise.all(items.map((item, index) => limit(() => fn(item, index))));
}
