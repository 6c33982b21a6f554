#!/usr/bin/env node
// The `grove` command. Answers `--version` itself, from package.json, loading nothing else. Any
// other command line first checks that this Node is the one Grove was installed for: the native
// modules (better-sqlite3) are built for that Node's ABI and crash on another (Node 20 dies with
// signal 11). `npm install` records that Node (scripts/check-runtime.mjs:
// node_modules/.cache/grove/runtime.json); when this Node's ABI (process.versions.modules)
// differs, bin/other-node.js runs the same command line again under the recorded Node, or says in
// one line which Node Grove needs. Then it goes to the CLI's dispatcher (main/headless/cli.ts),
// which loads only the module of the command it runs: from the bundle in out/cli/
// (scripts/build-cli.ts; `npm install`, `npm run build`, `npm run serve` and the test setup build
// it), else, in a source checkout not built yet or with GROVE_CLI_ENTRY=source, from the
// TypeScript sources (Node's type stripping: slower to start, same behaviour). Node's on-disk
// compile cache makes later starts of the same code skip most parsing and compiling
// (docs/performance.md, "Startup").
import { existsSync, readFileSync } from 'node:fs';
import module from 'node:module';

const args = process.argv.slice(2);
// Set by bin/other-node.js for the run it starts; not passed on to what that run starts.
const rerunFrom = process.env.GROVE_RERUN_FROM;
delete process.env.GROVE_RERUN_FROM;

/** The Node `npm install` recorded, or, without a record, the pinned `node` devDependency's. */
function installedRuntime() {
  try {
    const record = new URL('../node_modules/.cache/grove/runtime.json', import.meta.url);
    return JSON.parse(readFileSync(record, 'utf8'));
  } catch {
    try {
      const pinned = new URL('../node_modules/node/package.json', import.meta.url);
      const { version } = JSON.parse(readFileSync(pinned, 'utf8'));
      return { node: `v${version}`, execPath: 'node_modules/node/bin/node' };
    } catch {
      return undefined; // nothing installed here: the dispatcher's import says so
    }
  }
}

/** Whether this Node is not the installed one: its ABI, or without one recorded its major. */
function isOtherNode(runtime) {
  if (runtime === undefined) return false;
  if (runtime.modules !== undefined) return runtime.modules !== process.versions.modules;
  return runtime.node.split('.')[0] !== process.version.split('.')[0];
}

if (args[0] === '-v' || args[0] === '--version') {
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(`${version}\n`);
} else {
  const runtime = installedRuntime();
  if (isOtherNode(runtime)) {
    const { runUnder } = await import('./other-node.js');
    await runUnder(runtime, args, rerunFrom); // exits as the command does, or says what is missing
  }
  const bundle = new URL('../out/cli/grove.js', import.meta.url);
  const sources = new URL('../main/headless/cli.ts', import.meta.url);
  const fromSources = process.env.GROVE_CLI_ENTRY === 'source' || !existsSync(bundle);
  if (fromSources && !process.features.typescript) {
    process.stderr.write(
      `grove: the CLI is not built (out/cli/grove.js), and Node ${process.version} cannot run its ` +
        'TypeScript sources: run `npm run build` (or `npm install`), or use Node 24.\n',
    );
    process.exit(1);
  }
  // A user-set NODE_COMPILE_CACHE (already on) wins; Node before 22.1 has no compile cache.
  module.enableCompileCache?.();
  const { runCli } = await import(fromSources ? sources.href : bundle.href);
  await runCli(args);
}
