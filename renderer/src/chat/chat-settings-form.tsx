// The provider settings: provider (Anthropic or OpenAI-compatible), base URL, model, API key. The
// key field never shows a stored key — the host only says whether one is set — and a value typed
// there replaces it. Settings fixed by GROVE_LLM_* environment variables are shown but locked.
import { useId, useState, type FormEvent } from 'react';
import {
  DEFAULT_CHAT_BASE_URLS,
  type ChatProviderKind,
  type ChatSettingsChange,
  type ChatSettingsView,
} from '../../../shared/chat.ts';

const ENV_NAMES = {
  provider: 'GROVE_LLM_PROVIDER',
  baseUrl: 'GROVE_LLM_BASE_URL',
  model: 'GROVE_LLM_MODEL',
  apiKey: 'GROVE_LLM_API_KEY',
} as const;

export interface ChatSettingsFormProps {
  view: ChatSettingsView;
  onSave(change: ChatSettingsChange): Promise<string | null>;
  onClose(): void;
}

export function ChatSettingsForm({ view, onSave, onClose }: ChatSettingsFormProps) {
  const ids = {
    provider: useId(),
    baseUrl: useId(),
    model: useId(),
    apiKey: useId(),
    key: useId(),
  };
  const headingId = useId();
  const [provider, setProvider] = useState<ChatProviderKind>(view.provider);
  const [baseUrl, setBaseUrl] = useState(view.baseUrlIsDefault ? '' : view.baseUrl);
  const [model, setModel] = useState(view.model);
  const [apiKey, setApiKey] = useState('');
  const [clearKey, setClearKey] = useState(false);
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string } | null>(null);
  const locked = (field: keyof typeof ENV_NAMES) => view.fromEnvironment.includes(field);
  const allLocked = (Object.keys(ENV_NAMES) as (keyof typeof ENV_NAMES)[]).every(locked);

  const save = async (event: FormEvent): Promise<void> => {
    event.preventDefault();
    const change: ChatSettingsChange = {};
    if (!locked('provider') && provider !== view.provider) change.provider = provider;
    if (!locked('baseUrl')) change.baseUrl = baseUrl.trim() === '' ? null : baseUrl.trim();
    if (!locked('model')) change.model = model.trim() === '' ? null : model.trim();
    if (!locked('apiKey')) {
      if (apiKey !== '') change.apiKey = apiKey;
      else if (clearKey) change.apiKey = null;
    }
    setBusy(true);
    setOutcome(null);
    const error = await onSave(change);
    setBusy(false);
    if (error === null) {
      setApiKey('');
      setClearKey(false);
      // "Saved." alone would read as ready to chat: say when no key is set.
      const keySet = locked('apiKey')
        ? view.apiKeySet
        : apiKey !== '' || (view.apiKeySet && !clearKey);
      const kind = change.provider ?? view.provider;
      setOutcome({
        ok: true,
        text: keySet
          ? 'Saved.'
          : kind === 'anthropic'
            ? 'Saved, but no API key is set: the chat cannot answer until you add one.'
            : 'Saved. No API key is set: fine for a local server that needs none.',
      });
    } else {
      setOutcome({ ok: false, text: error });
    }
  };

  const envHint = (field: keyof typeof ENV_NAMES) =>
    locked(field) ? (
      <span className="chat-settings__env">
        set by <code>{ENV_NAMES[field]}</code>
      </span>
    ) : null;

  return (
    <section className="chat-settings" aria-labelledby={headingId}>
      <header className="chat-settings__header">
        <h3 id={headingId}>Model provider</h3>
        <button
          type="button"
          className="icon-button"
          aria-label="Close chat settings"
          onClick={onClose}
        >
          ×
        </button>
      </header>
      <form className="chat-settings__form" onSubmit={(event) => void save(event)}>
        <label htmlFor={ids.provider}>Provider {envHint('provider')}</label>
        <select
          id={ids.provider}
          className="select"
          value={provider}
          disabled={locked('provider')}
          onChange={(event) => setProvider(event.target.value as ChatProviderKind)}
        >
          <option value="anthropic">Anthropic (Messages API)</option>
          <option value="openai">OpenAI-compatible (OpenAI, Ollama, LM Studio, vLLM)</option>
        </select>

        <label htmlFor={ids.baseUrl}>Base URL {envHint('baseUrl')}</label>
        <input
          id={ids.baseUrl}
          className="input"
          type="url"
          spellCheck={false}
          placeholder={DEFAULT_CHAT_BASE_URLS[provider]}
          value={locked('baseUrl') ? view.baseUrl : baseUrl}
          disabled={locked('baseUrl')}
          onChange={(event) => setBaseUrl(event.target.value)}
        />

        <label htmlFor={ids.model}>Model {envHint('model')}</label>
        <input
          id={ids.model}
          className="input"
          spellCheck={false}
          placeholder={
            provider === 'anthropic' ? 'e.g. claude-sonnet-4-5' : 'e.g. gpt-4o, llama3.1'
          }
          value={locked('model') ? view.model : model}
          disabled={locked('model')}
          onChange={(event) => setModel(event.target.value)}
        />

        <label htmlFor={ids.apiKey}>API key {envHint('apiKey')}</label>
        <div className="chat-settings__key">
          <input
            id={ids.apiKey}
            className="input"
            type="password"
            autoComplete="off"
            spellCheck={false}
            placeholder={
              locked('apiKey')
                ? 'Set by the environment'
                : view.apiKeySet
                  ? 'A key is set — type to replace it'
                  : 'No key set'
            }
            value={apiKey}
            disabled={locked('apiKey')}
            aria-describedby={ids.key}
            onChange={(event) => {
              setApiKey(event.target.value);
              setClearKey(false);
            }}
          />
          {view.apiKeySet && !locked('apiKey') && (
            <label className="chat-settings__clear">
              <input
                type="checkbox"
                checked={clearKey}
                disabled={apiKey !== ''}
                onChange={(event) => setClearKey(event.target.checked)}
              />
              Remove the stored key
            </label>
          )}
        </div>
        <p id={ids.key} className="chat-settings__note">
          {view.apiKeySet ? 'An API key is set.' : 'No API key is set.'}{' '}
          {locked('apiKey')
            ? ''
            : view.apiKeyPersisted
              ? 'Keys are stored encrypted and never shown again.'
              : 'A key typed here is kept in memory until the host stops (no secret store).'}
        </p>

        {allLocked ? (
          <p className="chat-settings__note">
            Every setting comes from <code>GROVE_LLM_*</code> environment variables.
          </p>
        ) : (
          <div className="button-row chat-settings__actions">
            <button type="submit" className="button button--primary" disabled={busy}>
              {busy ? 'Saving…' : 'Save settings'}
            </button>
            {outcome && (
              <span
                className={outcome.ok ? 'chat-settings__saved' : 'error-text'}
                role={outcome.ok ? 'status' : 'alert'}
              >
                {outcome.text}
              </span>
            )}
          </div>
        )}
      </form>
    </section>
  );
}
