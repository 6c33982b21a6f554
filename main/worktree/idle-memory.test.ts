// The idle memory reclaimer: one collection after each quiet period that followed activity, none
// while requests keep coming, none without the gc extension.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createIdleMemoryReclaimer, type IdleMemoryReclaimer } from './idle-memory.ts';

let reclaimer: IdleMemoryReclaimer | undefined;
afterEach(() => {
  reclaimer?.close();
  vi.useRealTimers();
});

describe('idle memory reclaimer', () => {
  it('collects once after start, then once after each quiet period that followed activity', () => {
    vi.useFakeTimers();
    const gc = vi.fn();
    reclaimer = createIdleMemoryReclaimer({ quietMs: 1_000, gc: () => gc });
    vi.advanceTimersByTime(999);
    expect(gc).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(gc).toHaveBeenCalledTimes(1);
    expect(gc).toHaveBeenCalledWith({ type: 'major', execution: 'sync', flavor: 'last-resort' });

    vi.advanceTimersByTime(10_000); // quiet and nothing new: no further collection
    expect(gc).toHaveBeenCalledTimes(1);

    // Requests every 500 ms keep postponing it; it comes 1 s after the last one.
    for (let request = 0; request < 6; request++) {
      reclaimer.activity();
      vi.advanceTimersByTime(500);
    }
    expect(gc).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(500);
    expect(gc).toHaveBeenCalledTimes(2);
  });

  it('does nothing when turned off, or once closed', () => {
    vi.useFakeTimers();
    const withoutGc = createIdleMemoryReclaimer({ quietMs: 10, gc: undefined });
    withoutGc.activity();
    expect(vi.getTimerCount()).toBe(0);
    const gc = vi.fn();
    reclaimer = createIdleMemoryReclaimer({ quietMs: 10, gc: () => gc });
    reclaimer.close();
    reclaimer.activity();
    vi.advanceTimersByTime(100);
    expect(gc).not.toHaveBeenCalled();
  });

  it("exposes V8's own gc when none was given, and collects with it", async () => {
    let reclaimed = 0;
    reclaimer = createIdleMemoryReclaimer({ quietMs: 10, onReclaimed: () => reclaimed++ });
    const deadline = Date.now() + 5_000;
    while (reclaimed === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(reclaimed).toBe(1);
  });
});
