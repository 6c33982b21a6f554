import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runProcess, type RunProcessOptions } from './run-process.ts';

const base: RunProcessOptions = {
  cwd: process.cwd(),
  env: { PATH: process.env.PATH ?? '' },
  timeoutMs: 10_000,
  maxStdoutBytes: 1024,
  onOverflow: 'truncate',
};

/** True while a process with this pid runs (a zombie nobody reaped yet does not). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) [ZX]/.test(stat);
  } catch {
    return false;
  }
}

describe('runProcess', () => {
  it('runs an argument vector without a shell, with exactly the environment given', async () => {
    const output = await runProcess('sh', ['-c', 'echo "$1|$SECRET|$KEPT"', 'sh', '$(id) ; *'], {
      ...base,
      env: { PATH: process.env.PATH ?? '', KEPT: 'kept' },
    });
    expect(output.code).toBe(0);
    expect(output.stdout.toString()).toBe('$(id) ; *||kept\n');
  });

  it('keeps running past the cap with onOverflow truncate, and says it dropped output', async () => {
    const chunks: Buffer[] = [];
    const output = await runProcess('sh', ['-c', 'head -c 5000 /dev/zero; echo done >&2'], {
      ...base,
      onStdout: (chunk) => chunks.push(chunk),
    });
    expect(output.code).toBe(0);
    expect(output.stdout.length).toBe(1024);
    expect(output.stdoutTruncated).toBe(true);
    expect(output.stderr.toString()).toBe('done\n');
    expect(Buffer.concat(chunks).length).toBe(5000);
  });

  it('keeps the last bytes when asked for the tail', async () => {
    const output = await runProcess('sh', ['-c', 'head -c 3000 /dev/zero; echo the-end'], {
      ...base,
      keep: 'tail',
    });
    expect(output.stdout.length).toBe(1024);
    expect(output.stdout.toString().endsWith('the-end\n')).toBe(true);
    expect(output.stdoutTruncated).toBe(true);
  });

  it('stops the program at the cap with onOverflow kill', async () => {
    const output = await runProcess('sh', ['-c', 'while :; do echo y; done'], {
      ...base,
      onOverflow: 'kill',
    });
    expect(output.stopped).toBe('output-cap');
    expect(output.code).toBeNull();
  });

  it.runIf(process.platform === 'linux')(
    'kills the whole process group at the deadline, grandchildren included',
    async () => {
      const started = Date.now();
      const output = await runProcess('sh', ['-c', 'sleep 30 & echo $!; wait'], {
        ...base,
        timeoutMs: 300,
        processGroup: true,
      });
      expect(output.stopped).toBe('timeout');
      expect(Date.now() - started).toBeLessThan(5_000);
      const grandchild = Number(output.stdout.toString().trim());
      expect(grandchild).toBeGreaterThan(0);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(alive(grandchild)).toBe(false);
    },
  );

  it('stops on cancellation', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const output = await runProcess('sleep', ['30'], { ...base, signal: controller.signal });
    expect(output.stopped).toBe('cancelled');
  });

  it('never finds a program through a relative or empty PATH entry (they name the cwd)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'grove-run-process-'));
    try {
      writeFileSync(path.join(dir, 'grove-planted'), '#!/bin/sh\necho planted\n', { mode: 0o755 });
      for (const entries of ['/usr/bin:/bin:', '.:/usr/bin', '/usr/bin::/bin']) {
        const output = await runProcess('grove-planted', [], {
          ...base,
          cwd: dir,
          env: { PATH: entries },
        });
        expect(output.stdout.toString()).toBe('');
        expect(output.startError?.code).toBe('ENOENT');
      }
      // The program's own PATH is left as it was.
      const echoed = await runProcess('sh', ['-c', 'echo "$PATH"'], {
        ...base,
        cwd: dir,
        env: { PATH: '.:/usr/bin:/bin' },
      });
      expect(echoed.stdout.toString()).toBe('.:/usr/bin:/bin\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('lowers a program through the nice of an absolute PATH entry, never one planted in the cwd', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'grove-run-process-'));
    try {
      writeFileSync(path.join(dir, 'nice'), '#!/bin/sh\necho planted\n', { mode: 0o755 });
      const output = await runProcess('sh', ['-c', 'echo ran; cut -d" " -f19 /proc/$$/stat'], {
        ...base,
        cwd: dir,
        env: { PATH: '.:/usr/bin:/bin' },
        niceness: 19,
      });
      expect(output.stdout.toString()).toBe(process.platform === 'linux' ? 'ran\n19\n' : 'ran\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reports a program that is not installed as a start error, never a rejection', async () => {
    const output = await runProcess('grove-no-such-program', [], base);
    expect(output.code).toBeNull();
    expect(output.startError?.code).toBe('ENOENT');
  });
});
