// Chat persistence: conversations per worktree and their messages, in the app database (tables
// `chat_conversations` and `chat_messages`, created by app-database.ts's migrations; a
// conversation goes when its worktree row does). Message parts are stored as JSON and validated on
// read. A message left `streaming` by a host that died mid-answer is repaired at open: it becomes
// `stopped` and any unfinished tool call gets a "stopped" result, so no tool call dangles.
import type Database from 'better-sqlite3';
import { z } from 'zod';
import {
  ChatPartSchema,
  type ChatMessage,
  type ChatMessageStatus,
  type ChatPart,
} from '../../shared/chat.ts';

export interface ConversationRow {
  id: string;
  worktreeId: string;
  title: string;
  createdAt: number;
  updatedAt: number;
}

interface RawMessage {
  id: number;
  conversationId: number;
  role: 'user' | 'assistant';
  status: ChatMessageStatus;
  parts: string;
  error: string | null;
  createdAt: number;
}

const PartsSchema = z.array(ChatPartSchema);

export const STOPPED_RESULT_TEXT = 'Stopped by the user before the tool call finished.';

export class ConversationStore {
  readonly #db: Database.Database;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#recoverInterrupted();
  }

  createConversation(worktreeId: string, title: string): ConversationRow {
    const now = Date.now();
    const result = this.#db
      .prepare(
        'INSERT INTO chat_conversations (worktree_id, title, created_at, updated_at) VALUES (?, ?, ?, ?)',
      )
      .run(Number(worktreeId), title, now, now);
    return this.getConversation(String(result.lastInsertRowid))!;
  }

  getConversation(conversationId: string): ConversationRow | undefined {
    return this.#db
      .prepare(
        `SELECT CAST(id AS TEXT) AS id, CAST(worktree_id AS TEXT) AS worktreeId, title,
                created_at AS createdAt, updated_at AS updatedAt
         FROM chat_conversations WHERE id = ?`,
      )
      .get(Number(conversationId)) as ConversationRow | undefined;
  }

  /** A worktree's conversations, most recently updated first. */
  listConversations(worktreeId: string): ConversationRow[] {
    return this.#db
      .prepare(
        `SELECT CAST(id AS TEXT) AS id, CAST(worktree_id AS TEXT) AS worktreeId, title,
                created_at AS createdAt, updated_at AS updatedAt
         FROM chat_conversations WHERE worktree_id = ? ORDER BY updated_at DESC, id DESC`,
      )
      .all(Number(worktreeId)) as ConversationRow[];
  }

  deleteConversation(conversationId: string): void {
    this.#db.prepare('DELETE FROM chat_conversations WHERE id = ?').run(Number(conversationId));
  }

  setTitle(conversationId: string, title: string): void {
    this.#db
      .prepare('UPDATE chat_conversations SET title = ? WHERE id = ?')
      .run(title, Number(conversationId));
  }

  listMessages(conversationId: string): ChatMessage[] {
    const rows = this.#db
      .prepare(
        `SELECT id, conversation_id AS conversationId, role, status, parts, error,
                created_at AS createdAt
         FROM chat_messages WHERE conversation_id = ? ORDER BY id`,
      )
      .all(Number(conversationId)) as RawMessage[];
    return rows.map(toMessage);
  }

  addMessage(
    conversationId: string,
    message: Pick<ChatMessage, 'role' | 'status' | 'parts' | 'error'>,
  ): ChatMessage {
    const now = Date.now();
    const insert = this.#db.transaction(() => {
      const result = this.#db
        .prepare(
          `INSERT INTO chat_messages (conversation_id, role, status, parts, error, created_at)
           VALUES (?, ?, ?, ?, ?, ?)`,
        )
        .run(
          Number(conversationId),
          message.role,
          message.status,
          JSON.stringify(message.parts),
          message.error,
          now,
        );
      this.#touch(conversationId, now);
      return result.lastInsertRowid;
    });
    const id = insert();
    return { ...message, id: String(id), conversationId, createdAt: now };
  }

  /** Writes a message's current status, parts and error. */
  updateMessage(message: ChatMessage): void {
    this.#db.transaction(() => {
      this.#db
        .prepare('UPDATE chat_messages SET status = ?, parts = ?, error = ? WHERE id = ?')
        .run(message.status, JSON.stringify(message.parts), message.error, Number(message.id));
      this.#touch(message.conversationId, Date.now());
    })();
  }

  #touch(conversationId: string, at: number): void {
    this.#db
      .prepare('UPDATE chat_conversations SET updated_at = ? WHERE id = ?')
      .run(at, Number(conversationId));
  }

  #recoverInterrupted(): void {
    const rows = this.#db
      .prepare(
        `SELECT id, conversation_id AS conversationId, role, status, parts, error,
                created_at AS createdAt
         FROM chat_messages WHERE status = 'streaming'`,
      )
      .all() as RawMessage[];
    for (const row of rows) {
      const message = toMessage(row);
      this.updateMessage({ ...message, status: 'stopped', parts: settleParts(message.parts) });
    }
  }
}

/** Gives every tool call without a result a "stopped" one, so the history stays well-formed. */
export function settleParts(parts: ChatPart[]): ChatPart[] {
  return parts.map((part) =>
    part.type === 'tool-call' && (part.status === 'running' || part.result === null)
      ? {
          ...part,
          status: 'stopped' as const,
          result: part.result ?? { isError: true, text: STOPPED_RESULT_TEXT, durationMs: 0 },
        }
      : part,
  );
}

function toMessage(row: RawMessage): ChatMessage {
  let parts: ChatPart[];
  try {
    parts = PartsSchema.parse(JSON.parse(row.parts));
  } catch {
    parts = [{ type: 'text', text: '(this message could not be read)' }];
  }
  return {
    id: String(row.id),
    conversationId: String(row.conversationId),
    role: row.role,
    status: row.status,
    parts,
    error: row.error,
    createdAt: row.createdAt,
  };
}
