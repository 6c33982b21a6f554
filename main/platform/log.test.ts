import { readdir, readFile, rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir } from '../testing/temp-repo.ts';
import { LogRecordSchema, type LogRecord } from '../../shared/log-record.ts';
import { createLogger, formatLogLine, RotatingLogFile } from './log.ts';

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('logger', () => {
  it('writes records at the level asked and above, with scope, time and data', () => {
    const records: LogRecord[] = [];
    const log = createLogger([(record) => records.push(record)], { minLevel: 'info' });
    log.debug('not kept');
    log.info('started', { port: 47110 });
    log.child('worktree /r').child('mcp').error('listener failed');
    expect(records.map((record) => [record.level, record.scope, record.message])).toEqual([
      ['info', 'grove', 'started'],
      ['error', 'grove: worktree /r: mcp', 'listener failed'],
    ]);
    expect(records[0]?.data).toEqual({ port: 47110 });
    for (const record of records) expect(LogRecordSchema.parse(record)).toEqual(record);
    expect(formatLogLine(records[1] as LogRecord)).toBe(
      'grove: error: worktree /r: mcp: listener failed',
    );
  });

  it('keeps going when a sink throws', () => {
    const records: LogRecord[] = [];
    const log = createLogger([
      () => {
        throw new Error('disk full');
      },
      (record) => records.push(record),
    ]);
    log.warn('still here');
    expect(records).toHaveLength(1);
  });

  it('appends JSON lines to a private file and rotates it by size, keeping a few', async () => {
    dir = await makeTempDir();
    const file = new RotatingLogFile(dir, { maxBytes: 400, keep: 2 });
    const log = createLogger([file.sink]);
    for (let index = 0; index < 40; index++) log.info(`line ${index}`);
    file.close();
    expect((await readdir(dir)).sort()).toEqual(['grove.1.log', 'grove.2.log', 'grove.log']);
    const current = (await readFile(`${dir}/grove.log`, 'utf8')).trim().split('\n');
    const last = LogRecordSchema.parse(JSON.parse(current.at(-1) as string));
    expect(last.message).toBe('line 39');
    for (const name of ['grove.log', 'grove.1.log']) {
      expect((await readFile(`${dir}/${name}`)).length).toBeLessThanOrEqual(400);
    }
    const { stat } = await import('node:fs/promises');
    expect((await stat(`${dir}/grove.log`)).mode & 0o777).toBe(0o600);
  });
});
