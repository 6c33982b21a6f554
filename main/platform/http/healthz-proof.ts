// The proof a worktree server gives that it is the server of a worktree whose token the asker
// holds, without the token travelling: `GET /healthz?challenge=<nonce>` answers, beside `ok`, an
// HMAC-SHA256 keyed with the worktree's token over the nonce and the port the server listens on.
// Two askers, one proof:
// - `grove bridge` asks on every connection before its first request carries the token: a
//   stranger on the recorded port (another user's process, another Grove with another data
//   directory) cannot answer it, and a stranger relaying the challenge to the real server on
//   another port gets a proof for that other port (docs/security.md, "grove bridge");
// - a worktree process that finds its stable port taken asks the holder (worktree/port-claim.ts):
//   only this worktree's previous server, still stopping, knows its token and is waited for; a
//   sibling worktree, another Grove or any other program is not.
// The answer reveals nothing of the token (an HMAC is a pseudo-random function of its key).
import { nodeCrypto } from '../builtins.ts';

/** The query parameter of `/healthz` carrying the challenge. */
export const CHALLENGE_PARAM = 'challenge';

/** A challenge: 32 to 128 lowercase hex digits (the bridge sends 64: 32 random bytes). */
const CHALLENGE_PATTERN = /^[0-9a-f]{32,128}$/;

/** Whether a `/healthz` challenge is one the server answers. */
export function isChallenge(value: string | null | undefined): value is string {
  return typeof value === 'string' && CHALLENGE_PATTERN.test(value);
}

/** A fresh challenge: 32 random bytes, hex. */
export function newChallenge(): string {
  return nodeCrypto().randomBytes(32).toString('hex');
}

/** The proof for `challenge` of the server of `token` listening on `port`. */
export function healthzProof(token: string, port: number, challenge: string): string {
  return nodeCrypto()
    .createHmac('sha256', token)
    .update(`grove-healthz-v1\n${port}\n${challenge}`)
    .digest('hex');
}

/** Whether `presented` is the proof for `challenge` (compared in constant time). */
export function proofMatches(
  token: string,
  port: number,
  challenge: string,
  presented: unknown,
): boolean {
  if (typeof presented !== 'string' || !/^[0-9a-f]{64}$/.test(presented)) return false;
  const expected = Buffer.from(healthzProof(token, port, challenge), 'hex');
  return nodeCrypto().timingSafeEqual(expected, Buffer.from(presented, 'hex'));
}
