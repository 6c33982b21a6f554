// A clock for relative times ("12 s ago"): re-renders its component every few seconds. It reads
// nothing from the host; host data still arrives only through the store's events.
import { useEffect, useState } from 'react';

export function useNow(intervalMs = 5000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs]);
  return now;
}
