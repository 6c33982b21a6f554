#!/usr/bin/env node
// The `grove` command: runs the headless CLI from its TypeScript sources (Node >= 24 strips types).
import { runCli } from '../main/headless/cli.ts';

await runCli(process.argv.slice(2));
