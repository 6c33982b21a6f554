// Chat provider settings: provider, base URL and model in the app database's settings table; the
// API key in a SecretSource (Electron: the safeStorage-backed SecretStore; headless: memory only).
// `GROVE_LLM_PROVIDER`, `GROVE_LLM_BASE_URL`, `GROVE_LLM_MODEL` and `GROVE_LLM_API_KEY` override
// both. The key never leaves the host: the UI gets a view that only says whether one is set.
// A key typed into the settings is bound to the endpoint (provider + base URL) it was entered for:
// it is stored with that endpoint, changing the provider or base URL without a new key clears it,
// and a stored key whose endpoint is not the one in use counts as absent, so it is never sent to a
// URL it was not entered for. A key from GROVE_LLM_API_KEY is the user's explicit choice for the
// endpoint in use and is not bound.
import type Database from 'better-sqlite3';
import {
  ChatProviderKindSchema,
  DEFAULT_CHAT_BASE_URLS,
  type ChatProviderKind,
  type ChatSettingsChange,
  type ChatSettingsView,
} from '../../shared/chat.ts';

/** Where the host keeps secrets; main/electron/secret-store.ts's SecretStore satisfies it. */
export interface SecretSource {
  get(name: string): Promise<string | undefined>;
  set(name: string, value: string | undefined): Promise<void>;
}

/** A SecretSource that keeps secrets in memory for the host's lifetime (headless, tests). */
export function memorySecretSource(): SecretSource & { readonly persistent: false } {
  const values = new Map<string, string>();
  return {
    persistent: false,
    get: async (name) => values.get(name),
    set: async (name, value) => {
      if (value === undefined) values.delete(name);
      else values.set(name, value);
    },
  };
}

export const API_KEY_SECRET = 'llm-api-key';
const SETTINGS_KEY = 'chat-settings';

/** The settings the agent loop uses, key included: host-side only. */
export interface ResolvedChatSettings {
  provider: ChatProviderKind;
  baseUrl: string;
  model: string;
  apiKey: string | undefined;
}

interface StoredSettings {
  provider?: ChatProviderKind;
  baseUrl?: string;
  model?: string;
}

/** Where requests go: a stored key is only ever sent to the endpoint it was entered for. */
export interface ChatEndpoint {
  provider: ChatProviderKind;
  baseUrl: string;
}

/** The secret's value: the key and the endpoint it was entered for (JSON, version 1). */
interface BoundApiKey extends ChatEndpoint {
  v: 1;
  apiKey: string;
}

/** The base URL's canonical spelling (scheme and host case, default port, trailing slashes). */
export function normalizeBaseUrl(baseUrl: string): string {
  let canonical = baseUrl.trim();
  try {
    canonical = new URL(canonical).href;
  } catch {
    // Not a URL: compared as written.
  }
  return canonical.replace(/\/+$/, '');
}

export function sameEndpoint(a: ChatEndpoint, b: ChatEndpoint): boolean {
  return a.provider === b.provider && normalizeBaseUrl(a.baseUrl) === normalizeBaseUrl(b.baseUrl);
}

/** The bound key in a secret's value; undefined for a bare key stored by an older Grove. */
function parseBoundKey(value: string): BoundApiKey | undefined {
  if (!value.startsWith('{')) return undefined;
  try {
    const parsed = JSON.parse(value) as Partial<BoundApiKey>;
    if (
      parsed.v === 1 &&
      typeof parsed.apiKey === 'string' &&
      typeof parsed.baseUrl === 'string' &&
      ChatProviderKindSchema.safeParse(parsed.provider).success
    ) {
      return parsed as BoundApiKey;
    }
  } catch {
    // Not ours: a bare key.
  }
  return undefined;
}

function serializeBoundKey(apiKey: string, endpoint: ChatEndpoint): string {
  const bound: BoundApiKey = {
    v: 1,
    apiKey,
    provider: endpoint.provider,
    baseUrl: normalizeBaseUrl(endpoint.baseUrl),
  };
  return JSON.stringify(bound);
}

type EnvName = 'provider' | 'baseUrl' | 'model' | 'apiKey';

export class ChatSettings {
  readonly #db: Database.Database;
  readonly #secrets: SecretSource;
  readonly #env: Partial<Record<EnvName, string>>;

  constructor(
    db: Database.Database,
    secrets: SecretSource,
    env: Record<string, string | undefined> = process.env,
  ) {
    this.#db = db;
    this.#secrets = secrets;
    const provider = env.GROVE_LLM_PROVIDER?.trim();
    if (provider && !ChatProviderKindSchema.safeParse(provider).success) {
      throw new Error(`GROVE_LLM_PROVIDER must be "anthropic" or "openai", not "${provider}"`);
    }
    const pick = (name: string) => env[name]?.trim() || undefined;
    this.#env = {
      ...(provider ? { provider } : {}),
      ...(pick('GROVE_LLM_BASE_URL') ? { baseUrl: pick('GROVE_LLM_BASE_URL') } : {}),
      ...(pick('GROVE_LLM_MODEL') ? { model: pick('GROVE_LLM_MODEL') } : {}),
      ...(pick('GROVE_LLM_API_KEY') ? { apiKey: pick('GROVE_LLM_API_KEY') } : {}),
    };
  }

  async resolve(): Promise<ResolvedChatSettings> {
    const stored = this.#stored();
    const endpoint = this.#endpoint(stored);
    return {
      ...endpoint,
      model: this.#env.model ?? stored.model ?? '',
      apiKey: this.#env.apiKey ?? (await this.#boundKey(endpoint)),
    };
  }

  async view(): Promise<ChatSettingsView> {
    const resolved = await this.resolve();
    return {
      provider: resolved.provider,
      baseUrl: resolved.baseUrl,
      baseUrlIsDefault: resolved.baseUrl === DEFAULT_CHAT_BASE_URLS[resolved.provider],
      model: resolved.model,
      apiKeySet: resolved.apiKey !== undefined && resolved.apiKey !== '',
      fromEnvironment: (Object.keys(this.#env) as EnvName[]).sort(),
      apiKeyPersisted: (this.#secrets as { persistent?: boolean }).persistent !== false,
    };
  }

  async change(change: ChatSettingsChange): Promise<ChatSettingsView> {
    const stored = this.#stored();
    const before = this.#endpoint(stored);
    if (change.provider !== undefined) {
      // Another provider's default base URL is not this one's.
      if (change.provider !== stored.provider && change.baseUrl === undefined)
        delete stored.baseUrl;
      stored.provider = change.provider;
    }
    if (change.baseUrl !== undefined) {
      if (change.baseUrl === null) delete stored.baseUrl;
      else stored.baseUrl = change.baseUrl.replace(/\/+$/, '');
    }
    if (change.model !== undefined) {
      if (change.model === null || change.model.trim() === '') delete stored.model;
      else stored.model = change.model.trim();
    }
    const after = this.#endpoint(stored);
    // The key first: if the secret store fails, the settings stay as they were (and a key left
    // bound to the old endpoint is not used for the new one anyway).
    if (typeof change.apiKey === 'string') {
      await this.#secrets.set(API_KEY_SECRET, serializeBoundKey(change.apiKey, after));
    } else if (change.apiKey === null) {
      await this.#secrets.set(API_KEY_SECRET, undefined);
    } else if (!sameEndpoint(before, after) && (await this.#secrets.get(API_KEY_SECRET))) {
      // A new endpoint without a new key: the old key was not entered for it. Enter it again.
      await this.#secrets.set(API_KEY_SECRET, undefined);
    }
    this.#db
      .prepare(
        'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
      )
      .run(SETTINGS_KEY, JSON.stringify(stored));
    return this.view();
  }

  /** The endpoint in use: environment first, then the stored settings, then the default. */
  #endpoint(stored: StoredSettings): ChatEndpoint {
    const provider =
      (this.#env.provider as ChatProviderKind | undefined) ?? stored.provider ?? 'anthropic';
    return {
      provider,
      baseUrl: this.#env.baseUrl ?? stored.baseUrl ?? DEFAULT_CHAT_BASE_URLS[provider],
    };
  }

  /** The stored key if it was entered for `endpoint`; otherwise undefined (never sent there). */
  async #boundKey(endpoint: ChatEndpoint): Promise<string | undefined> {
    const value = await this.#secrets.get(API_KEY_SECRET);
    if (value === undefined || value === '') return undefined;
    const bound = parseBoundKey(value);
    if (bound) return sameEndpoint(bound, endpoint) ? bound.apiKey : undefined;
    // A bare key from an older Grove, which sent it to the endpoint in use: bind it there now.
    // If that cannot be recorded, it is not used (it would follow the next change of URL).
    try {
      await this.#secrets.set(API_KEY_SECRET, serializeBoundKey(value, endpoint));
    } catch {
      return undefined;
    }
    return value;
  }

  #stored(): StoredSettings {
    const row = this.#db.prepare('SELECT value FROM settings WHERE key = ?').get(SETTINGS_KEY) as
      { value: string } | undefined;
    if (!row) return {};
    try {
      const parsed = JSON.parse(row.value) as StoredSettings;
      const provider = ChatProviderKindSchema.safeParse(parsed.provider);
      return {
        ...(provider.success ? { provider: provider.data } : {}),
        ...(typeof parsed.baseUrl === 'string' ? { baseUrl: parsed.baseUrl } : {}),
        ...(typeof parsed.model === 'string' ? { model: parsed.model } : {}),
      };
    } catch {
      return {};
    }
  }
}
