// Hands the one HostStore to the component tree and lets components read it without polling
// (useSyncExternalStore re-renders them when the store's state object changes).
import { createContext, useContext, useSyncExternalStore } from 'react';
import type { HostStore, HostStoreState } from '../store/host-store.ts';

export const HostStoreContext = createContext<HostStore | null>(null);

export function useHostStore(): HostStore {
  const store = useContext(HostStoreContext);
  if (!store) throw new Error('useHostStore must be used inside <HostStoreContext value={store}>');
  return store;
}

export function useHostState(): HostStoreState {
  const store = useHostStore();
  return useSyncExternalStore(store.subscribe, store.getState);
}
