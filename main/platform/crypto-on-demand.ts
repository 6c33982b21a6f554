// node:crypto, loaded on first use. Loading it initializes OpenSSL, about 3.7 MB of RSS, which a
// worktree process that no client has called (it answers the host's /healthz and watches its
// specs) never needs: its users — the token check on a client's request, the names of temporary
// files in atomic writes — ask for it through here (docs/performance.md, idle memory).
import type * as NodeCrypto from 'node:crypto';
import { createRequire } from 'node:module';

const requireBuiltin = createRequire(import.meta.url);
let loaded: typeof NodeCrypto | undefined;

/** node:crypto, required (not imported: an ESM import would load it with the importing module). */
export function nodeCrypto(): typeof NodeCrypto {
  return (loaded ??= requireBuiltin('node:crypto') as typeof NodeCrypto);
}
