// A small bounded-concurrency map for the engine's file work (stat, hash, read): enough requests
// in flight to keep libuv's thread pool busy, few enough not to exhaust file descriptors.

/** Default number of file operations in flight. */
export const FILE_CONCURRENCY = 32;

/** Maps `items` through `work` with at most `limit` calls pending; keeps the order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
  signal?: AbortSignal,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      signal?.throwIfAborted();
      const index = next++;
      results[index] = await work(items[index] as T, index);
    }
  };
  const workers = Array.from({ length: Math.min(limit, items.length) }, () => worker());
  await Promise.all(workers);
  return results;
}
