// Loops whose length grows with the repository (100,000 governed files: classifying them against
// the cache, matching them against specs, writing their cache rows) run on the event loop, which
// every client of a worktree shares. They run in slices: once SLICE_MS have passed since the first
// check after the event loop's last turn, the loop waits for setImmediate, so the sockets are
// polled and other clients' requests are served before it goes on. (A slice is not cut short
// because a loop starts after an await: that yield would only hand the loop to other work.) A call on a big repository then takes a little
// longer; nobody else waits for all of it.
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

/**
 * Lets the event loop take its turn (I/O is polled before setImmediate callbacks run), then starts
 * a new slice. Throws the signal's reason if the call was cancelled meanwhile.
 */
export async function nextSlice(signal?: AbortSignal): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
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
