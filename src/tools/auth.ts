import { createBoundedCache } from '../workflow/bounded-cache.js';
import { bearerToken, parseToken, sha256HexEqual, tokenSha256 } from './token.js';
import type { RunResolver, VerifiedRun } from './types.js';

export interface TokenVerifierOptions {
  resolveRun: RunResolver;
  /** Entries kept; the least recently used goes first. Default 1024. */
  cacheSize?: number;
  /** How long an entry is trusted before resolveRun is asked again. Default 30 s. */
  cacheTtlMs?: number;
  now?: () => number;
}

/** Why a request was refused: for the log only; the caller is told nothing but 401. */
export type Refusal = 'no_token' | 'malformed' | 'unknown_run' | 'revoked' | 'hash_mismatch';

export type Verification = { ok: true; run: VerifiedRun } | { ok: false; refusal: Refusal };

export interface TokenVerifier {
  /** Checks an Authorization header. resolveRun failures propagate (not a refusal). */
  verify(authorization: string | string[] | undefined): Promise<Verification>;
  /** Drops the cached tokens of a run (it finished), so the next call asks resolveRun. */
  forget(namespace: string, run: string): void;
}

interface Entry {
  run: VerifiedRun;
  expiresAt: number;
}

export const DEFAULT_TOKEN_CACHE_SIZE = 1024;
export const DEFAULT_TOKEN_CACHE_TTL_MS = 30_000;

/**
 * Verifies bearer tokens against the hash resolveRun returns. Every request of an agent
 * carries the token, and resolveRun may cost the controller a read, so verified tokens are
 * kept by their hash for a while; the TTL bounds how long a revocation the gateway was not
 * told about (forget) can go unnoticed.
 */
export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  const cacheSize = options.cacheSize ?? DEFAULT_TOKEN_CACHE_SIZE;
  const ttlMs = options.cacheTtlMs ?? DEFAULT_TOKEN_CACHE_TTL_MS;
  const now = options.now ?? Date.now;
  const cache = createBoundedCache<string, Entry>(cacheSize);

  const remember = (hash: string, run: VerifiedRun): void =>
    cache.set(hash, { run, expiresAt: now() + ttlMs });

  const forget = (namespace: string, run: string): void =>
    cache.deleteWhere((entry) => entry.run.namespace === namespace && entry.run.run === run);

  return {
    forget,
    async verify(authorization) {
      const token = bearerToken(authorization);
      if (token === null) return { ok: false, refusal: 'no_token' };
      const subject = parseToken(token);
      if (!subject) return { ok: false, refusal: 'malformed' };
      // The cache is keyed by the full hash: a hit means this exact token was verified.
      const hash = tokenSha256(token);
      const cached = cache.get(hash);
      if (cached && cached.expiresAt > now()) return { ok: true, run: cached.run };
      cache.delete(hash);
      const resolved = await options.resolveRun(subject.namespace, subject.run, subject.attempt);
      if (!resolved) return { ok: false, refusal: 'unknown_run' };
      if (!sha256HexEqual(hash, resolved.tokenHash)) return { ok: false, refusal: 'hash_mismatch' };
      if (resolved.revoked) {
        forget(subject.namespace, subject.run);
        return { ok: false, refusal: 'revoked' };
      }
      const run: VerifiedRun = { ...subject, resolved };
      remember(hash, run);
      return { ok: true, run };
    },
  };
}
