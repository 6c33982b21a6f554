// read_file against a real repository: whole files, line ranges, head/tail, caps, binary and
// directory refusals, unusual file names.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempRepo, type TempRepo } from '../testing/temp-repo.ts';
import {
  MAX_CONTENT_BYTES,
  MAX_WHOLE_FILE_BYTES,
  readFileTool,
  type ReadFileResult,
} from './read-file.ts';
import { UserError } from '../platform/errors.ts';

let repo: TempRepo;

async function read(args: Record<string, unknown>): Promise<ReadFileResult> {
  const result = await readFileTool.handler(args as never, {
    root: repo.root,
    signal: new AbortController().signal,
  });
  // Every result must satisfy the declared output schema.
  return readFileTool.outputSchema.parse(result) as unknown as ReadFileResult;
}

async function refusal(args: Record<string, unknown>): Promise<string> {
  const error: unknown = await read(args).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(UserError);
  return (error as UserError).message;
}

const fiveLines = 'one\ntwo\nthree\nfour\nfive\n';
/** About 2 MiB of numbered 12-byte lines: "line 000001\n" ... */
const bigLineCount = 175_000;
const bigLines = Array.from(
  { length: bigLineCount },
  (_, index) => `line ${String(index + 1).padStart(6, '0')}\n`,
).join('');

beforeAll(async () => {
  repo = await makeTempRepo({
    'five.txt': fiveLines,
    'no-newline.txt': 'alpha\nbeta',
    'crlf.txt': 'a\r\nb\r\nc\r\n',
    'empty.txt': '',
    'bom.txt': '\ufeffwith bom\n',
    'big.txt': bigLines,
    'one-huge-line.txt': 'é'.repeat(MAX_CONTENT_BYTES) + '\nsecond\n',
    'image.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]),
    'late-nul.dat': Buffer.concat([
      Buffer.from('x'.repeat(4000)),
      Buffer.from([0]),
      Buffer.from('y'),
    ]),
    'latin1.txt': Buffer.concat([
      Buffer.from('plain ascii text, '.repeat(20)),
      Buffer.from([0x63, 0x61, 0x66, 0xe9]),
      Buffer.from('\n'),
    ]),
    'dossier é/naïve — 日本語 🎉.txt': 'unicode name\n',
    'src/index.ts': 'export {};\n',
  });
  // The same name in decomposed form (e + combining acute) is a different file on Linux.
  await writeFile(path.join(repo.root, 'cafe\u0301.txt'), 'decomposed\n');
  await writeFile(path.join(repo.root, 'caf\u00e9.txt'), 'composed\n');
});

afterAll(async () => {
  await repo.cleanup();
});

describe('read_file', () => {
  it('reads a whole file', async () => {
    expect(await read({ path: 'five.txt' })).toEqual({
      path: 'five.txt',
      content: fiveLines,
      start_line: 1,
      end_line: 5,
      total_lines: 5,
      size_bytes: fiveLines.length,
      truncated: false,
    });
  });

  it('counts a last line without a newline, and keeps CRLF and a BOM as stored', async () => {
    expect(await read({ path: 'no-newline.txt' })).toMatchObject({
      content: 'alpha\nbeta',
      total_lines: 2,
      end_line: 2,
    });
    expect(await read({ path: 'no-newline.txt', tail: 1 })).toMatchObject({
      content: 'beta',
      start_line: 2,
      end_line: 2,
    });
    expect((await read({ path: 'crlf.txt', start_line: 2, end_line: 2 })).content).toBe('b\r\n');
    expect((await read({ path: 'bom.txt' })).content).toBe('\ufeffwith bom\n');
  });

  it('reads an empty file', async () => {
    expect(await read({ path: 'empty.txt' })).toEqual({
      path: 'empty.txt',
      content: '',
      start_line: 1,
      end_line: 0,
      total_lines: 0,
      size_bytes: 0,
      truncated: false,
    });
    expect(await read({ path: 'empty.txt', tail: 3 })).toMatchObject({ content: '', end_line: 0 });
  });

  it('reads a line range', async () => {
    expect(await read({ path: 'five.txt', start_line: 2, end_line: 4 })).toMatchObject({
      content: 'two\nthree\nfour\n',
      start_line: 2,
      end_line: 4,
      total_lines: 5,
      truncated: false,
    });
    expect(await read({ path: 'five.txt', start_line: 4 })).toMatchObject({
      content: 'four\nfive\n',
      start_line: 4,
      end_line: 5,
    });
    expect(await read({ path: 'five.txt', end_line: 2 })).toMatchObject({
      content: 'one\ntwo\n',
      start_line: 1,
      end_line: 2,
    });
    expect(await read({ path: 'five.txt', start_line: 3, end_line: 99 })).toMatchObject({
      content: 'three\nfour\nfive\n',
      end_line: 5,
    });
  });

  it('refuses impossible ranges', async () => {
    expect(await refusal({ path: 'five.txt', start_line: 6 })).toMatch(
      /start_line 6 is past the end of "five.txt", which has 5 lines/,
    );
    expect(await refusal({ path: 'five.txt', start_line: 4, end_line: 2 })).toMatch(
      /end_line \(2\) is before start_line \(4\)/,
    );
    expect(await refusal({ path: 'five.txt', start_line: 0 })).toMatch(/invalid arguments/);
    expect(await refusal({ path: 'five.txt', head: 1.5 })).toMatch(/invalid arguments/);
  });

  it('reads head and tail', async () => {
    expect(await read({ path: 'five.txt', head: 2 })).toMatchObject({
      content: 'one\ntwo\n',
      start_line: 1,
      end_line: 2,
      total_lines: 5,
    });
    expect(await read({ path: 'five.txt', tail: 2 })).toMatchObject({
      content: 'four\nfive\n',
      start_line: 4,
      end_line: 5,
      total_lines: 5,
    });
    expect(await read({ path: 'five.txt', head: 50 })).toMatchObject({ content: fiveLines });
    expect(await read({ path: 'five.txt', tail: 50 })).toMatchObject({
      content: fiveLines,
      start_line: 1,
    });
  });

  it('refuses more than one way of choosing lines, and unknown arguments', async () => {
    const message = /only one way of choosing lines/;
    expect(await refusal({ path: 'five.txt', head: 1, tail: 1 })).toMatch(message);
    expect(await refusal({ path: 'five.txt', head: 1, start_line: 1 })).toMatch(message);
    expect(await refusal({ path: 'five.txt', tail: 1, end_line: 3 })).toMatch(message);
    expect(await refusal({ path: 'five.txt', offset: 10, limit: 5 })).toMatch(
      /invalid arguments for read_file:[\s\S]*offset/,
    );
  });

  it('refuses a binary file, saying so with its size', async () => {
    expect(await refusal({ path: 'image.png' })).toMatch(
      /binary file, not shown: "image.png" \(12 bytes\)/,
    );
    expect(await refusal({ path: 'image.png', head: 1 })).toMatch(/binary file/);
  });

  it('finds a NUL byte anywhere in the first 8 KiB', async () => {
    expect(await refusal({ path: 'late-nul.dat' })).toMatch(
      /binary file, not shown: "late-nul.dat" \(3.9 KiB \(4002 bytes\)\)/,
    );
  });

  it('decodes stray non-UTF-8 bytes in a text file as U+FFFD', async () => {
    expect((await read({ path: 'latin1.txt' })).content).toMatch(/caf\ufffd\n$/);
  });

  it('refuses a file over the cap, pointing at head, tail and line ranges', async () => {
    const message = await refusal({ path: 'big.txt' });
    expect(message).toMatch(/file is too large to read whole: "big.txt" is 2.0 MiB/);
    expect(message).toMatch(/head/);
    expect(message).toMatch(/tail/);
    expect(message).toMatch(/start_line and end_line/);
    expect(bigLines.length).toBeGreaterThan(MAX_WHOLE_FILE_BYTES);
  });

  it('reads parts of a file over the cap', async () => {
    expect(await read({ path: 'big.txt', head: 2 })).toMatchObject({
      content: 'line 000001\nline 000002\n',
      total_lines: bigLineCount,
      size_bytes: bigLines.length,
      truncated: false,
    });
    expect(await read({ path: 'big.txt', tail: 1 })).toMatchObject({
      content: `line ${String(bigLineCount).padStart(6, '0')}\n`,
      start_line: bigLineCount,
      end_line: bigLineCount,
    });
    expect(await read({ path: 'big.txt', start_line: 100_000, end_line: 100_001 })).toMatchObject({
      content: 'line 100000\nline 100001\n',
      start_line: 100_000,
      end_line: 100_001,
    });
  });

  it('cuts a range larger than the cap after a whole line', async () => {
    const result = await read({ path: 'big.txt', start_line: 1 });
    expect(result.truncated).toBe(true);
    expect(Buffer.byteLength(result.content)).toBeLessThanOrEqual(MAX_CONTENT_BYTES);
    expect(result.content.endsWith('\n')).toBe(true);
    expect(result.end_line).toBe(Math.floor(MAX_CONTENT_BYTES / 12));
    expect(result.content.split('\n').length - 1).toBe(result.end_line);
    const next = await read({ path: 'big.txt', start_line: result.end_line + 1 });
    expect(next.content.startsWith(`line ${String(result.end_line + 1).padStart(6, '0')}\n`)).toBe(
      true,
    );
  });

  it('cuts a single line longer than the cap without splitting a character', async () => {
    const result = await read({ path: 'one-huge-line.txt', head: 1 });
    expect(result).toMatchObject({ start_line: 1, end_line: 1, total_lines: 2, truncated: true });
    expect(Buffer.byteLength(result.content)).toBe(MAX_CONTENT_BYTES);
    expect(result.content).toBe('é'.repeat(MAX_CONTENT_BYTES / 2));
    expect(await read({ path: 'one-huge-line.txt', start_line: 2 })).toMatchObject({
      content: 'second\n',
      truncated: false,
    });
  });

  it('refuses a directory, pointing at list_directory', async () => {
    expect(await refusal({ path: 'src' })).toMatch(/is a directory.*"src".*list_directory/);
    expect(await refusal({ path: '.' })).toMatch(/is a directory/);
  });

  it('reads files with non-ASCII names, composed and decomposed', async () => {
    expect(await read({ path: 'dossier é/naïve — 日本語 🎉.txt' })).toMatchObject({
      path: 'dossier é/naïve — 日本語 🎉.txt',
      content: 'unicode name\n',
    });
    expect((await read({ path: 'caf\u00e9.txt' })).content).toBe('composed\n');
    expect((await read({ path: 'cafe\u0301.txt' })).content).toBe('decomposed\n');
  });

  it('says clearly when a file does not exist', async () => {
    expect(await refusal({ path: 'no/such/file.txt' })).toBe(
      'no such file or directory in the worktree: "no/such/file.txt"',
    );
    expect(await refusal({ path: 'five.txt/' })).toMatch(/not a directory/);
  });

  it('stops when the call is cancelled', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      readFileTool.handler({ path: 'five.txt' } as never, {
        root: repo.root,
        signal: controller.signal,
      }),
    ).rejects.toThrow(/cancelled/);
  });

  it('declares itself read-only, with schemas that accept its own results', async () => {
    expect(readFileTool.name).toBe('read_file');
    expect(readFileTool.annotations.readOnlyHint).toBe(true);
    expect(readFileTool.inputSchema.safeParse({ path: 'a', head: 3 }).success).toBe(true);
    const result = await read({ path: 'five.txt', tail: 2 });
    expect(readFileTool.outputSchema.parse(result)).toEqual(result);
  });
});
