// Renderer entry: picks the HostApi transport (Electron preload or `grove serve` over HTTP), starts
// the mirrored store and renders the window.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { pickHostApi } from './host-api/pick-host-api.ts';
import { HostStore } from './store/host-store.ts';
import { App } from './ui/app.tsx';
import { HostStoreContext } from './common/store-context.tsx';
// The stylesheets, one per view beside it (and theme, controls, tables and states shared by all),
// imported here in one fixed order so the cascade is the same whatever the component tree does.
import './ui/theme.css';
import './ui/app.css';
import './ui/sidebar.css';
import './ui/controls.css';
import './ui/worktree-view.css';
import './ui/tables.css';
import './ui/tools-tab.css';
import './ui/connect-tab.css';
import './ui/states.css';
import './chat/chat-tab.css';
import './chat/chat-markdown.css';
import './chat/chat-messages.css';
import './chat/chat-composer.css';
import './chat/chat-settings.css';
import './reconcile/reconcile-tab.css';
import './reconcile/decisions.css';
import './coverage/coverage-tab.css';
import './common/drift-word.css';

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
