// Renderer entry: picks the HostApi transport (Electron preload or `grove serve` over HTTP), starts
// the mirrored store and renders the window.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { pickHostApi } from './host-api/pick-host-api.ts';
import { HostStore } from './store/host-store.ts';
import { App } from './ui/app.tsx';
import { HostStoreContext } from './ui/store-context.tsx';
import './styles.css';

const store = new HostStore(pickHostApi());
store.connect();

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element');
createRoot(root).render(
  <StrictMode>
    <HostStoreContext value={store}>
      <App />
    </HostStoreContext>
  </StrictMode>,
);
