// read_multiple_files on a real repository: results in order, one error per failing entry never
// failing the batch, the read_file rules applied to each entry, and the total size cap.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempRepo, type TempRepo } from '../testing/temp-repo.ts';
import { MAX_WHOLE_FILE_BYTES } from './read-file.ts';
import {
  MAX_BATCH_BYTES,
  MAX_BATCH_FILES,
  readMultipleFilesTool,
  type ReadMultipleResult,
} from './read-multiple-files.ts';

let repo: TempRepo;

async function readMany(paths: unknown[]): Promise<ReadMultipleResult> {
  const result = await readMultipleFilesTool.handler({ paths } as never, {
    root: repo.root,
    signal: new AbortController().signal,
  });
  return readMultipleFilesTool.outputSchema.parse(result) as ReadMultipleResult;
}

beforeAll(async () => {
  const chunk = `${'z'.repeat(1023)}\n`;
  repo = await makeTempRepo({
    'a.txt': 'alpha\n',
    'src/b.ts': 'export const b = 2;\n',
    'image.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x00]),
    'ünï.txt': 'ä\n',
    'big-1.txt': chunk.repeat(1000),
    'big-2.txt': chunk.repeat(1000),
    'big-3.txt': chunk.repeat(1000),
    'big-4.txt': chunk.repeat(1000),
    'big-5.txt': chunk.repeat(1000),
  });
  await writeFile(path.join(repo.root, 'huge.txt'), 'y'.repeat(MAX_WHOLE_FILE_BYTES + 1));
});

afterAll(async () => {
  await repo.cleanup();
});

describe('read_multiple_files', () => {
  it('reads each file in order, with its own error when it fails', async () => {
    const result = await readMany([
      'src/b.ts',
      '../outside.txt',
      'a.txt',
      'image.png',
      'missing.txt',
      'huge.txt',
      '.git/config',
      'src',
      'ünï.txt',
      'a.txt',
    ]);
    expect(result.files).toEqual([
      {
        path: 'src/b.ts',
        resolved_path: 'src/b.ts',
        content: 'export const b = 2;\n',
        total_lines: 1,
        size_bytes: 20,
      },
      { path: '../outside.txt', error: expect.stringMatching(/escapes the worktree root/) },
      { path: 'a.txt', resolved_path: 'a.txt', content: 'alpha\n', total_lines: 1, size_bytes: 6 },
      { path: 'image.png', error: expect.stringMatching(/binary file, not shown/) },
      { path: 'missing.txt', error: expect.stringMatching(/no such file or directory/) },
      { path: 'huge.txt', error: expect.stringMatching(/too large to read whole/) },
      { path: '.git/config', error: expect.stringMatching(/inside \.git/) },
      { path: 'src', error: expect.stringMatching(/is a directory/) },
      { path: 'ünï.txt', resolved_path: 'ünï.txt', content: 'ä\n', total_lines: 1, size_bytes: 3 },
      { path: 'a.txt', resolved_path: 'a.txt', content: 'alpha\n', total_lines: 1, size_bytes: 6 },
    ]);
    expect(result).toMatchObject({
      read_count: 4,
      error_count: 6,
      total_bytes: 20 + 6 + 3 + 6,
      truncated: false,
    });
  });

  it(`stops adding content at the ${MAX_BATCH_BYTES / 1024 / 1024} MiB total, per entry`, async () => {
    const result = await readMany([
      'big-1.txt',
      'big-2.txt',
      'big-3.txt',
      'big-4.txt',
      'big-5.txt',
      'a.txt',
    ]);
    const read = result.files.filter((file) => file.content !== undefined);
    expect(read.map((file) => file.path)).toEqual([
      'big-1.txt',
      'big-2.txt',
      'big-3.txt',
      'big-4.txt',
      'a.txt',
    ]);
    expect(result.files[4]).toEqual({
      path: 'big-5.txt',
      resolved_path: 'big-5.txt',
      error: expect.stringMatching(
        /total of this call was reached; read this file in another call/,
      ),
    });
    expect(result.truncated).toBe(true);
    expect(result.total_bytes).toBeLessThanOrEqual(MAX_BATCH_BYTES);
  });

  it('refuses an empty or too long list', async () => {
    await expect(readMany([])).rejects.toThrow(/invalid arguments/);
    await expect(
      readMany(Array.from({ length: MAX_BATCH_FILES + 1 }, () => 'a.txt')),
    ).rejects.toThrow(/invalid arguments/);
  });
});
