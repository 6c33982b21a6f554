// postinstall: checks that npm scripts run on the Node that Grove pins (the `node` devDependency,
// which npm puts first on PATH inside scripts) and that the native SQLite binding loads on it.
// Fails the install with a clear message instead of letting tests fail obscurely later. Then
// records that Node (node_modules/.cache/grove/runtime.json: its version, its ABI
// `process.versions.modules`, its path) for bin/grove.js, which re-runs itself under it when
// started by another Node (the system's `node`, on which the native modules may crash).
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REQUIRED_MAJOR = 24;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Where bin/grove.js reads the record (keep the two in step). */
const RUNTIME_RECORD = path.join(ROOT, 'node_modules', '.cache', 'grove', 'runtime.json');

const major = Number(process.versions.node.split('.')[0]);
if (major < REQUIRED_MAJOR) {
  console.error(
    `grove: npm scripts run on Node ${process.version}, but Grove needs Node ${REQUIRED_MAJOR}+.\n` +
      'The pinned runtime is the `node` devDependency (node_modules/.bin/node); run `npm install` again.',
  );
  process.exit(1);
}
try {
  const Database = createRequire(import.meta.url)('better-sqlite3');
  new Database(':memory:').close();
} catch (error) {
  console.error(`grove: better-sqlite3 does not load on Node ${process.version}: ${error.message}`);
  process.exit(1);
}

// The path relative to the checkout when the Node is inside it (a moved checkout still finds it).
const inside = path.relative(ROOT, process.execPath);
const execPath =
  inside.startsWith('..') || path.isAbsolute(inside)
    ? process.execPath
    : inside.split(path.sep).join('/');
mkdirSync(path.dirname(RUNTIME_RECORD), { recursive: true });
const record = { node: process.version, modules: process.versions.modules, execPath };
writeFileSync(`${RUNTIME_RECORD}.partial`, `${JSON.stringify(record)}\n`);
renameSync(`${RUNTIME_RECORD}.partial`, RUNTIME_RECORD);
console.log(`grove: runtime ok (Node ${process.version}, better-sqlite3 loads)`);
