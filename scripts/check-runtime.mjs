// postinstall: checks that npm scripts run on the Node that Grove pins (the `node` devDependency,
// which npm puts first on PATH inside scripts) and that the native SQLite binding loads on it.
// Fails the install with a clear message instead of letting tests fail obscurely later.
import { createRequire } from 'node:module';

const REQUIRED_MAJOR = 24;
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
console.log(`grove: runtime ok (Node ${process.version}, better-sqlite3 loads)`);
