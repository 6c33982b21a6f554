// Entry of a grep worker thread: searches the chunks of files the pool (grep-pool.ts) posts, with
// the synchronous reader (blocking only this thread), and posts each chunk's result back. Holds no
// state between chunks.
import { parentPort } from 'node:worker_threads';
import { createSyncReader } from './grep-readers.ts';
import { searchChunk, type GrepChunkRequest } from './grep-search.ts';

export interface GrepWorkerRequest {
  id: number;
  request: GrepChunkRequest;
}

export type GrepWorkerReply =
  | { id: number; ok: true; result: Awaited<ReturnType<typeof searchChunk>> }
  | { id: number; ok: false; message: string };

const port = parentPort;
if (port === null) throw new Error('grep-worker.ts must run in a worker thread');

port.on('message', (message: GrepWorkerRequest) => {
  const reader = createSyncReader(message.request.root, message.request.maxFileBytes);
  searchChunk(message.request, (file) => reader.read(file))
    .then(
      (result): GrepWorkerReply => ({ id: message.id, ok: true, result }),
      (error: unknown): GrepWorkerReply => ({
        id: message.id,
        ok: false,
        message: error instanceof Error ? error.message : String(error),
      }),
    )
    .then((reply) => {
      reader.close();
      port.postMessage(reply);
    });
});
// Tells the pool the worker started (its imports loaded).
port.postMessage({ ready: true });
