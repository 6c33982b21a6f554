// Long loops in slices: a request to an HTTP server in the same process is answered while a loop
// over many items runs (it would wait for the end of a plain loop), and a cancelled call stops
// its loop at the next slice; background work pauses at its slices.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  filterInSlices,
  forEachInSlices,
  nextSlice,
  pauseAtSlices,
  SLICE_MS,
  someInSlices,
  sortInSlices,
} from './time-slices.ts';

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** An HTTP server on 127.0.0.1 that notes when each request came in. */
async function listen(answered: string[]): Promise<string> {
  server = createServer((_request, response) => {
    answered.push('request');
    response.end('ok');
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

/** Keeps the thread busy for `ms` (the cost of one item of a heavy loop). */
function busyFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spinning
  }
}

/** Enough items that the loop lasts 30 slices. */
const ITEMS = Array.from({ length: (SLICE_MS * 30) / 0.05 }, (_, index) => index);

describe('work in slices', () => {
  it('lets an HTTP request be answered while a long loop runs', async () => {
    const events: string[] = [];
    const url = await listen(events);
    const request = fetch(url).then((response) => response.text());
    await forEachInSlices(ITEMS, () => busyFor(0.05));
    events.push('loop done');
    expect(await request).toBe('ok');
    expect(events).toEqual(['request', 'loop done']);
  });

  it('(the same loop without slices keeps the request waiting until it ends)', async () => {
    const events: string[] = [];
    const url = await listen(events);
    const request = fetch(url).then((response) => response.text());
    for (const _item of ITEMS) busyFor(0.05);
    events.push('loop done');
    expect(await request).toBe('ok');
    expect(events).toEqual(['loop done', 'request']);
  });

  it('filters in order, and stops at the next slice once the call is cancelled', async () => {
    expect(await filterInSlices([5, 1, 4, 2, 3], (value) => value % 2 === 1)).toEqual([5, 1, 3]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('the client cancelled')), SLICE_MS * 3);
    let seen = 0;
    await expect(
      forEachInSlices(
        ITEMS,
        () => {
          seen++;
          busyFor(0.05);
        },
        controller.signal,
      ),
    ).rejects.toThrow('the client cancelled');
    expect(seen).toBeGreaterThan(0);
    expect(seen).toBeLessThan(ITEMS.length);
  });

  it('finds whether any item passes, stopping at the first, and gives turns meanwhile', async () => {
    let tested = 0;
    let turns = 0;
    const ticking = setInterval(() => turns++, 1);
    try {
      const found = await someInSlices(ITEMS, (value) => {
        tested++;
        busyFor(0.05);
        return value === ITEMS[ITEMS.length - 2];
      });
      expect(found).toBe(true);
      expect(tested).toBe(ITEMS.length - 1);
      expect(turns).toBeGreaterThan(0);
    } finally {
      clearInterval(ticking);
    }
    expect(await someInSlices([1, 3, 5], (value) => value % 2 === 0)).toBe(false);
  });

  it('sorts as Array.prototype.sort does (stable), whatever the length, and gives turns meanwhile', async () => {
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (const length of [0, 1, 2, 2047, 2048, 2049, 5000, 10_001]) {
      // Few distinct keys, so ties are many: a stable sort keeps their order of arrival.
      const items = Array.from({ length }, (_, index) => ({
        key: Math.floor(random() * 50),
        index,
      }));
      const byKey = (a: { key: number }, b: { key: number }) => a.key - b.key;
      expect(await sortInSlices(items, byKey)).toEqual([...items].sort(byKey));
    }
    const sorted = Array.from({ length: 100 }, (_, index) => index);
    expect(await sortInSlices(sorted, (a, b) => a - b)).toEqual(sorted);

    const big = Array.from({ length: 200_000 }, () => random());
    let done = false;
    let turns = 0;
    const sorting = sortInSlices(big, (a, b) => a - b).then((result) => ((done = true), result));
    while (!done) {
      await new Promise((resolve) => setImmediate(resolve));
      turns++;
    }
    expect(await sorting).toEqual([...big].sort((a, b) => a - b));
    expect(turns).toBeGreaterThan(1);
  });
});

describe('pauses of background work', () => {
  it('hold its slices until the pause ends, and leave other work alone', async () => {
    const background = new AbortController().signal;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    pauseAtSlices(background, () => gate);
    let resumed = false;
    const paused = nextSlice(background).then(() => (resumed = true));
    await nextSlice(); // other work goes on meanwhile
    await nextSlice(new AbortController().signal);
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(resumed).toBe(false);
    release();
    await paused;
    expect(resumed).toBe(true);
  });
});
