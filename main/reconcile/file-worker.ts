// Entry of one file worker thread (started by file-pool.ts): receives FileJobs, runs them with
// synchronous fs calls (file-jobs.ts) and posts the results back. Holds no state.
import { parentPort } from 'node:worker_threads';
import { runFileJob } from './file-jobs.ts';
import type { FileJob } from './file-jobs.ts';

parentPort?.on('message', (message: { id: number; job: FileJob }) => {
  try {
    const result = runFileJob(message.job);
    const transfer = 'codes' in result ? [result.codes.buffer as ArrayBuffer] : [];
    parentPort?.postMessage({ id: message.id, result }, transfer);
  } catch (error) {
    parentPort?.postMessage({
      id: message.id,
      error: error instanceof Error ? error.message : String(error),
    });
  }
});
