// State the window keeps across worktree switches and reloads (the selected worktree, the tab):
// kept in sessionStorage under one key, read once when the component mounts. sessionStorage belongs
// to one window: a reload keeps the user's place, a new window (or browser tab) starts at the start.
// A browser without storage (or a value of another shape) falls back to the initial value.
import { useCallback, useState } from 'react';

const PREFIX = 'grove.';

function read<T extends string>(key: string, allowed: (value: string) => value is T): T | null {
  try {
    const value = window.sessionStorage.getItem(PREFIX + key);
    return value !== null && allowed(value) ? value : null;
  } catch {
    return null;
  }
}

export function useRememberedState<T extends string>(
  key: string,
  initial: T,
  allowed: (value: string) => value is T,
): [T, (value: T) => void] {
  const [value, setValue] = useState<T>(() => read(key, allowed) ?? initial);
  const remember = useCallback(
    (next: T) => {
      setValue(next);
      try {
        window.sessionStorage.setItem(PREFIX + key, next);
      } catch {
        // No storage (private mode, quota): the choice lasts until the window reloads.
      }
    },
    [key],
  );
  return [value, remember];
}
