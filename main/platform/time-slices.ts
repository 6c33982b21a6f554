// Loops whose length grows with the repository (100,000 governed files: classifying them against
// the cache, matching them against specs, writing their cache rows) run on the event loop, which
// every client of a worktree shares. They run in slices: once SLICE_MS have passed since the first
// check after the event loop's last turn, the loop waits for setImmediate, so the sockets are
// polled and other clients' requests are served before it goes on. (A slice is not cut short
// because a loop starts after an await: that yield would only hand the loop to other work.) A
// call on a big repository then takes a little longer; nobody else waits for all of it.
//
//   for (const file of files) {
//     work(file);
//     if (sliceDue()) await nextSlice(signal);
//   }

/** Longest stretch of sliced work between two turns of the event loop, in ms. */
export const SLICE_MS = 10;

/** Calls to sliceDue between two reads of the clock. */
const CHECK_EVERY = 64;

/** When the current slice began: the first check after the event loop's last turn. */
let sliceStarted = 0;
/** True while a slice runs: set by its first check, cleared by the event loop's next turn. */
let inSlice = false;
let untilCheck = CHECK_EVERY;

/**
 * Call once per item of a long loop: true when the current slice is used up and the loop should
 * `await nextSlice()`. Cheap: it reads the clock once every CHECK_EVERY items. `items`: how many
 * items this call stands for (a statement writing 200 rows), so coarse work reads it every time.
 */
export function sliceDue(items = 1): boolean {
  untilCheck -= items;
  if (untilCheck > 0) return false;
  return sliceUsedUp();
}

/** True when the current slice is used up (reads the clock: for steps that are long each). */
export function sliceUsedUp(): boolean {
  untilCheck = CHECK_EVERY;
  const now = performance.now();
  if (!inSlice) {
    // The first check since the event loop's last turn (work resumed after I/O, or a new call).
    startSlice(now);
    return false;
  }
  return now - sliceStarted >= SLICE_MS;
}

/** A slice starts now, and ends at the event loop's next turn, whoever gives it. */
function startSlice(now: number): void {
  inSlice = true;
  sliceStarted = now;
  setImmediate(() => (inSlice = false));
}

/** Pauses of background work, by the signal its loops pass to nextSlice (pauseAtSlices). */
const pauses = new WeakMap<AbortSignal, () => Promise<void>>();

/**
 * Background work that runs with `signal` (the window's recomputation) waits for `pause()` at each
 * of its slices (nextSlice) and before each job it hands to the worker pool (pauseIfAsked): it
 * steps aside while clients' calls run instead of taking turns from them. `pause` must not wait
 * for anything the paused work holds: no loop inside a cache database's `use` passes a signal.
 */
export function pauseAtSlices(signal: AbortSignal, pause: () => Promise<void>): void {
  pauses.set(signal, pause);
}

/** True when `signal` belongs to background work (pauseAtSlices): its git runs at low priority. */
export function isBackgroundWork(signal?: AbortSignal): boolean {
  return signal !== undefined && pauses.has(signal);
}

/** The pause of the background work running with `signal`, if it has one (pauseAtSlices). */
export function pauseIfAsked(signal?: AbortSignal): Promise<void> | undefined {
  return signal === undefined ? undefined : pauses.get(signal)?.();
}

/**
 * Lets the event loop take its turn (I/O is polled before setImmediate callbacks run), then starts
 * a new slice. Throws the signal's reason if the call was cancelled meanwhile. Background work
 * pauses here first (pauseAtSlices).
 */
export async function nextSlice(signal?: AbortSignal): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  await pauseIfAsked(signal);
  startSlice(performance.now()); // counted from here, even if the next check comes late
  untilCheck = CHECK_EVERY;
  signal?.throwIfAborted();
}

/** `work` for each item, in slices. */
export async function forEachInSlices<T>(
  items: Iterable<T>,
  work: (item: T, index: number) => void,
  signal?: AbortSignal,
): Promise<void> {
  let index = 0;
  for (const item of items) {
    work(item, index++);
    if (sliceDue()) await nextSlice(signal);
  }
}

/** The items `keep` accepts, in order, matched in slices. */
export async function filterInSlices<T>(
  items: Iterable<T>,
  keep: (item: T) => boolean,
  signal?: AbortSignal,
): Promise<T[]> {
  const kept: T[] = [];
  await forEachInSlices(
    items,
    (item) => {
      if (keep(item)) kept.push(item);
    },
    signal,
  );
  return kept;
}

/** True if `test` accepts any item; tested in slices, stopping at the first. */
export async function someInSlices<T>(
  items: Iterable<T>,
  test: (item: T) => boolean,
  signal?: AbortSignal,
): Promise<boolean> {
  for (const item of items) {
    if (test(item)) return true;
    if (sliceDue()) await nextSlice(signal);
  }
  return false;
}

/** Items sorted natively per run before the runs are merged in slices. */
const SORT_RUN = 2048;

/**
 * `items` sorted (stable), in slices: runs of SORT_RUN items are sorted natively, then merged
 * pairwise, checking the slice as it goes. Sorting 100,000 paths at once holds the event loop
 * ~65-100 ms. Items already in order cost one pass and are returned as they are.
 */
export async function sortInSlices<T>(
  items: readonly T[],
  compare: (a: T, b: T) => number,
  signal?: AbortSignal,
): Promise<readonly T[]> {
  let inOrder = true;
  for (let index = 1; index < items.length && inOrder; index++) {
    inOrder = compare(items[index - 1] as T, items[index] as T) <= 0;
    if (sliceDue()) await nextSlice(signal);
  }
  if (inOrder) return items;
  let from: T[] = [];
  for (let start = 0; start < items.length; start += SORT_RUN) {
    from.push(...items.slice(start, start + SORT_RUN).sort(compare));
    if (sliceDue(SORT_RUN)) await nextSlice(signal);
  }
  let into = new Array<T>(items.length);
  for (let width = SORT_RUN; width < items.length; width *= 2) {
    for (let start = 0; start < items.length; start += 2 * width) {
      const middle = Math.min(start + width, items.length);
      const end = Math.min(start + 2 * width, items.length);
      let left = start;
      let right = middle;
      for (let out = start; out < end; out++) {
        // Stable: on a tie the left run's item comes first.
        if (right >= end || (left < middle && compare(from[left] as T, from[right] as T) <= 0)) {
          into[out] = from[left++] as T;
        } else {
          into[out] = from[right++] as T;
        }
        if (sliceDue()) await nextSlice(signal);
      }
    }
    [from, into] = [into, from];
  }
  return from;
}
