// Chat provider settings: provider, base URL and model in the app database's settings table; the
// API key in a SecretSource (Electron: the safeStorage-backed SecretStore; headless: memory only).
// `GROVE_LLM_PROVIDER`, `GROVE_LLM_BASE_URL`, `GROVE_LLM_MODEL` and `GROVE_LLM_API_KEY` override
// both. The key never leaves the host: the UI gets a view that only says whether one is set.
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
    const provider =
      (this.#env.provider as ChatProviderKind | undefined) ?? stored.provider ?? 'anthropic';
    return {
      provider,
      baseUrl: this.#env.baseUrl ?? stored.baseUrl ?? DEFAULT_CHAT_BASE_URLS[provider],
      model: this.#env.model ?? stored.model ?? '',
      apiKey: this.#env.apiKey ?? (await this.#secrets.get(API_KEY_SECRET)),
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
    this.#db
      .prepare(
        'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
      )
      .run(SETTINGS_KEY, JSON.stringify(stored));
    if (change.apiKey !== undefined) {
      await this.#secrets.set(API_KEY_SECRET, change.apiKey ?? undefined);
    }
    return this.view();
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
