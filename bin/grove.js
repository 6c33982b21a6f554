#!/usr/bin/env node
// The `grove` command. Answers `--version` itself, from package.json, loading nothing else. Any
// other command line goes to the CLI's dispatcher (main/headless/cli.ts), which loads only the
// module of the command it runs: from the bundle in out/cli/ (scripts/build-cli.ts; `npm install`,
// `npm run build`, `npm run serve` and the test setup build it), else, in a source checkout not
// built yet or with GROVE_CLI_ENTRY=source, from the TypeScript sources (Node's type stripping:
// slower to start, same behaviour). Node's on-disk compile cache makes later starts of the same
// code skip most parsing and compiling (docs/performance.md, "Startup").
import { existsSync, readFileSync } from 'node:fs';
import module from 'node:module';

const args = process.argv.slice(2);

if (args[0] === '-v' || args[0] === '--version') {
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(`${version}\n`);
} else {
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
