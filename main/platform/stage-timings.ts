// Opt-in timings of the stages of an HTTP request and the tool call it carries, for benchmarks
// (scripts/bench-reconcile.ts): with GROVE_STAGE_TIMINGS=<file> in a worktree process's
// environment, the listener starts a trace as each request arrives, the layers below add named
// marks (`stageMark('hashed')`), and once the answer has left the trace is appended to <file> as
// one JSON line: `{"marks":[["arrived",0],["hashed",123.4],...]}` (ms since arrival). Without the
// variable every call here is a no-op that checks one boolean. One trace at a time: a request that
// arrives while another is traced is not traced (benchmarks send one call at a time).
import { appendFileSync } from 'node:fs';

const target = process.env.GROVE_STAGE_TIMINGS;
/** True when stage timings were asked for (checked once, at load). */
export const stageTimingsEnabled = target !== undefined && target !== '';

interface Trace {
  started: number;
  marks: [string, number][];
}

let current: Trace | undefined;

/**
 * Starts the trace of a request that just arrived; returns the function that ends it (writes the
 * line), or undefined when not tracing (disabled, or another request is being traced).
 */
export function stageTraceStart(): (() => void) | undefined {
  if (!stageTimingsEnabled || current !== undefined) return undefined;
  const trace: Trace = { started: performance.now(), marks: [['arrived', 0]] };
  current = trace;
  return () => {
    if (current !== trace) return;
    current = undefined;
    trace.marks.push(['answer-sent', performance.now() - trace.started]);
    try {
      appendFileSync(target as string, `${JSON.stringify({ marks: trace.marks })}\n`);
    } catch {
      // A benchmark's file that cannot be written: the call itself is unaffected.
    }
  };
}

/** Records that the traced request reached `stage` now (no-op when none is traced). */
export function stageMark(stage: string): void {
  if (current === undefined) return;
  current.marks.push([stage, performance.now() - current.started]);
}
