// Who holds a worktree's port: a worktree process that finds its stable port taken asks the holder
// `GET /healthz` with a random challenge; a Grove worktree server answers with a proof computed
// from the challenge and its own token (HMAC-SHA-256). Only a server that knows this worktree's
// token — this worktree's previous server, still stopping — answers the proof the asker expects;
// a sibling worktree, a Grove of another data directory or any other program does not. Nothing
// that reveals the token goes over the wire: not to the holder (it may be anything), not back.
import { nodeCrypto } from '../builtins.ts';

/** The request header that carries the challenge (32 random bytes, hex). */
export const PORT_CHALLENGE_HEADER = 'x-grove-port-challenge';

/** A challenge as the holder accepts it: hex, 32 to 128 characters. */
const CHALLENGE = /^[0-9a-f]{32,128}$/;

export function isPortChallenge(value: unknown): value is string {
  return typeof value === 'string' && CHALLENGE.test(value);
}

/** A fresh challenge. */
export function newPortChallenge(): string {
  return nodeCrypto().randomBytes(32).toString('hex');
}

/** The proof a server with `token` answers to `challenge` (hex). */
export function portProof(token: string, challenge: string): string {
  return nodeCrypto()
    .createHmac('sha256', token)
    .update(`grove-port-holder:${challenge}`, 'utf8')
    .digest('hex');
}

/** True when `proof` is what a server with `token` answers to `challenge` (constant time). */
export function isOwnPortProof(proof: unknown, token: string, challenge: string): boolean {
  if (typeof proof !== 'string') return false;
  const expected = Buffer.from(portProof(token, challenge), 'utf8');
  const presented = Buffer.from(proof, 'utf8');
  return presented.length === expected.length && nodeCrypto().timingSafeEqual(presented, expected);
}
