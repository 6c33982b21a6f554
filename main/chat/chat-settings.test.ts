// The chat API key is bound to the endpoint (provider + base URL) it was entered for: changing the
// URL or provider without a new key clears it and the settings say no key is set; a stored key is
// never used for another URL (not even one set by GROVE_LLM_BASE_URL); a key from
// GROVE_LLM_API_KEY stays usable. Real SQLite app database, real Host and fake providers on
// 127.0.0.1 for the end-to-end check of what reaches the wire.
import { afterEach, describe, expect, it } from 'vitest';
import { runHostCommand } from '../host/host-commands.ts';
import { AppDatabase } from '../host/app-database.ts';
import { Host } from '../host/host.ts';
import { randomFirstPort } from '../testing/net.ts';
import { makeTempDir, makeTempRepo } from '../testing/temp-repo.ts';
import {
  API_KEY_SECRET,
  ChatSettings,
  memorySecretSource,
  type SecretSource,
} from './chat-settings.ts';
import { startFakeProvider } from '../testing/fake-llm-provider.ts';

const KEY = 'sk-entered-for-a';
const URL_A = 'https://llm-a.example.test/v1';
const URL_B = 'https://llm-b.example.test/v1';

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function openSettings(
  secrets: SecretSource = memorySecretSource(),
  env: Record<string, string | undefined> = {},
  dataDir?: string,
): Promise<{ settings: ChatSettings; secrets: SecretSource; db: AppDatabase; dataDir: string }> {
  const dir = dataDir ?? (await makeTempDir());
  const db = await AppDatabase.open(dir);
  cleanups.push(() => db.close());
  return { settings: new ChatSettings(db.connection, secrets, env), secrets, db, dataDir: dir };
}

describe('the chat API key is bound to its base URL', () => {
  it('is cleared when the base URL changes without a new key, and stays cleared', async () => {
    const { settings, secrets } = await openSettings();
    await settings.change({ provider: 'openai', baseUrl: URL_A, model: 'm', apiKey: KEY });
    expect((await settings.resolve()).apiKey).toBe(KEY);

    const view = await settings.change({ baseUrl: URL_B });
    expect(view).toMatchObject({ baseUrl: URL_B, apiKeySet: false });
    expect((await settings.resolve()).apiKey).toBeUndefined();
    expect(await secrets.get(API_KEY_SECRET)).toBeUndefined(); // gone, not just hidden

    // Going back to the first URL does not bring it back: it has to be entered again.
    expect(await settings.change({ baseUrl: URL_A })).toMatchObject({ apiKeySet: false });
    expect((await settings.resolve()).apiKey).toBeUndefined();
  });

  it('is cleared when the provider changes (another provider, another default URL)', async () => {
    const { settings } = await openSettings();
    await settings.change({ provider: 'anthropic', apiKey: KEY });
    expect(await settings.view()).toMatchObject({ provider: 'anthropic', apiKeySet: true });
    expect(await settings.change({ provider: 'openai' })).toMatchObject({
      provider: 'openai',
      baseUrl: 'https://api.openai.com/v1',
      apiKeySet: false,
    });
    expect((await settings.resolve()).apiKey).toBeUndefined();
  });

  it('keeps the key for other changes and for the same URL spelled differently', async () => {
    const { settings } = await openSettings();
    await settings.change({ provider: 'openai', baseUrl: URL_A, apiKey: KEY });
    await settings.change({ model: 'another-model' });
    await settings.change({ baseUrl: 'HTTPS://LLM-A.example.test:443/v1/' });
    expect(await settings.view()).toMatchObject({ apiKeySet: true });
    expect((await settings.resolve()).apiKey).toBe(KEY);
  });

  it('binds a key given with a new URL to that URL', async () => {
    const { settings } = await openSettings();
    await settings.change({ provider: 'openai', baseUrl: URL_A, apiKey: KEY });
    await settings.change({ baseUrl: URL_B, apiKey: 'sk-entered-for-b' });
    expect(await settings.resolve()).toMatchObject({ baseUrl: URL_B, apiKey: 'sk-entered-for-b' });
  });

  it('never uses a stored key for another URL, even one set by GROVE_LLM_BASE_URL', async () => {
    const secrets = memorySecretSource();
    const first = await openSettings(secrets);
    await first.settings.change({ provider: 'openai', baseUrl: URL_A, apiKey: KEY });

    // The same data directory and secret store, started with the URL overridden.
    const overridden = new ChatSettings(first.db.connection, secrets, {
      GROVE_LLM_BASE_URL: URL_B,
    });
    expect(await overridden.resolve()).toMatchObject({ baseUrl: URL_B, apiKey: undefined });
    expect(await overridden.view()).toMatchObject({ baseUrl: URL_B, apiKeySet: false });
    // Without the override the key is still there for the URL it was entered for.
    expect((await first.settings.resolve()).apiKey).toBe(KEY);
  });

  it('uses a key from GROVE_LLM_API_KEY with GROVE_LLM_BASE_URL', async () => {
    const { settings } = await openSettings(memorySecretSource(), {
      GROVE_LLM_PROVIDER: 'openai',
      GROVE_LLM_BASE_URL: URL_B,
      GROVE_LLM_API_KEY: 'sk-from-env',
    });
    await settings.change({ baseUrl: URL_A }); // the environment wins; the key stays usable
    expect(await settings.resolve()).toMatchObject({ baseUrl: URL_B, apiKey: 'sk-from-env' });
  });

  it('binds a bare key stored by an older Grove to the URL in use, then clears it on a change', async () => {
    const secrets = memorySecretSource();
    const { settings } = await openSettings(secrets);
    await settings.change({ provider: 'openai', baseUrl: URL_A });
    await secrets.set(API_KEY_SECRET, KEY); // the old format: the key alone
    expect((await settings.resolve()).apiKey).toBe(KEY);
    expect(await settings.change({ baseUrl: URL_B })).toMatchObject({ apiKeySet: false });
    expect((await settings.resolve()).apiKey).toBeUndefined();
  });

  it('leaves the settings unchanged when the key cannot be cleared, without naming the key', async () => {
    const stored = memorySecretSource();
    let failing = false;
    const secrets: SecretSource = {
      get: (name) => stored.get(name),
      set: async (name, value) => {
        if (failing) throw new Error('the system keychain is not available');
        await stored.set(name, value);
      },
    };
    const { settings } = await openSettings(secrets);
    await settings.change({ provider: 'openai', baseUrl: URL_A, apiKey: KEY });
    failing = true;
    const error = await settings.change({ baseUrl: URL_B }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).not.toContain(KEY);
    expect(await settings.resolve()).toMatchObject({ baseUrl: URL_A, apiKey: KEY });
  });

  it('sends no key to a new URL: Anthropic asks for one, an OpenAI endpoint gets none', async () => {
    const repo = await makeTempRepo();
    cleanups.push(repo.cleanup);
    const first = await startFakeProvider('openai', [{ kind: 'text', chunks: ['from A'] }]);
    const second = await startFakeProvider('openai', [{ kind: 'text', chunks: ['from B'] }]);
    cleanups.push(
      () => first.close(),
      () => second.close(),
    );
    const host = await Host.open({
      dataDir: await makeTempDir(),
      firstPort: randomFirstPort(),
      worktreePollMs: 0,
      chat: { env: {} },
    });
    cleanups.push(() => host.close());
    const worktreeId = (await host.addRepo(repo.root)).worktrees[0]!.id;
    await host.startAll();
    const ask = async (text: string): Promise<void> => {
      const { id } = host.chat.newConversation(worktreeId);
      await runHostCommand(host, 'sendChatMessage', { worktreeId, conversationId: id, text });
      await host.chat.whenIdle(id);
    };

    await runHostCommand(host, 'setChatSettings', {
      provider: 'openai',
      baseUrl: first.baseUrl,
      model: 'fake-model',
      apiKey: KEY,
    });
    await ask('hello A');
    expect(first.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);

    const view = await runHostCommand(host, 'setChatSettings', { baseUrl: second.baseUrl });
    expect(view).toMatchObject({ baseUrl: second.baseUrl, apiKeySet: false });
    await ask('hello B');
    expect(second.requests).toHaveLength(1);
    expect(JSON.stringify(second.requests[0]!.headers)).not.toContain(KEY);

    await runHostCommand(host, 'setChatSettings', {
      provider: 'anthropic',
      baseUrl: first.baseUrl,
    });
    const { id } = host.chat.newConversation(worktreeId);
    await expect(
      runHostCommand(host, 'sendChatMessage', { worktreeId, conversationId: id, text: 'hi' }),
    ).rejects.toThrow('Set an Anthropic API key in the chat settings first.');
  });
});
