// Session map bookkeeping: eviction at the cap, idle reaping, shutdown.
import { describe, expect, it } from 'vitest';
import { LegacySessionRegistry } from './legacy-sessions.ts';
import type { LegacySession } from './legacy-sessions.ts';

function fakeSession(id: string, lastActivity: number, held = false) {
  const closed: string[] = [];
  const session: LegacySession = {
    id,
    transport: 'streamable-http',
    lastActivity,
    isHeld: () => held,
    close: async () => {
      closed.push(id);
    },
  };
  return { session, closed };
}

describe('LegacySessionRegistry', () => {
  it('evicts the least recently active session at the cap', async () => {
    let now = 0;
    const registry = new LegacySessionRegistry({ maxSessions: 2, idleMs: 1000, now: () => now });
    const a = fakeSession('a', 0);
    const b = fakeSession('b', 0);
    await registry.add(a.session);
    await registry.add(b.session);
    now = 5;
    registry.touch('a');
    const c = fakeSession('c', 6);
    await registry.add(c.session);
    expect(b.closed).toEqual(['b']);
    expect(b.session.closeReason).toBe('evicted');
    expect(registry.get('b')).toBeUndefined();
    expect(registry.get('a')).toBe(a.session);
    expect(registry.size).toBe(2);
  });

  it('reaps idle sessions that are not held', async () => {
    let now = 0;
    const registry = new LegacySessionRegistry({ maxSessions: 10, idleMs: 100, now: () => now });
    const idle = fakeSession('idle', 0);
    const held = fakeSession('held', 0, true);
    const busy = fakeSession('busy', 0);
    for (const { session } of [idle, held, busy]) await registry.add(session);
    now = 150;
    registry.touch('busy');
    await registry.reapIdle();
    expect(idle.closed).toEqual(['idle']);
    expect(idle.session.closeReason).toBe('idle');
    expect(held.closed).toEqual([]);
    expect(busy.closed).toEqual([]);
    expect(registry.size).toBe(2);
  });

  it('closes everything on shutdown', async () => {
    const registry = new LegacySessionRegistry({ maxSessions: 10, idleMs: 100 });
    const one = fakeSession('one', 0);
    await registry.add(one.session);
    await registry.closeAll();
    expect(one.closed).toEqual(['one']);
    expect(one.session.closeReason).toBe('shutdown');
    expect(registry.size).toBe(0);
  });
});
