import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Host key verification against an OpenSSH known_hosts text. Nothing is ever learned or
 * written back: a host with no entry is refused, and so is a host whose entries all name
 * other keys (a changed key, or a man in the middle). Supported: comma-separated patterns
 * with `*`/`?` wildcards and `!` negation, `[host]:port` names, hashed `|1|salt|hash`
 * entries and the `@revoked` marker; `@cert-authority` lines are skipped (certificates are
 * not accepted).
 */

export type HostKeyVerdict =
  { ok: true } | { ok: false; reason: 'unknown' | 'changed' | 'revoked' };

interface Entry {
  marker: 'revoked' | 'cert-authority' | null;
  patterns: string[];
  keyType: string;
  key: Buffer;
}

function parseLine(line: string): Entry | null {
  const fields = line.trim().split(/\s+/);
  if (fields[0] === undefined || fields[0] === '' || fields[0].startsWith('#')) return null;
  let marker: Entry['marker'] = null;
  if (fields[0].startsWith('@')) {
    const name = fields.shift()?.slice(1);
    if (name !== 'revoked' && name !== 'cert-authority') return null;
    marker = name;
  }
  const [patterns, keyType, key] = fields;
  if (patterns === undefined || keyType === undefined || key === undefined) return null;
  return { marker, patterns: patterns.split(','), keyType, key: Buffer.from(key, 'base64') };
}

export function parseKnownHosts(text: string): Entry[] {
  return text.split('\n').flatMap((line) => parseLine(line) ?? []);
}

function wildcardMatch(pattern: string, name: string): boolean {
  const source = pattern
    .split('')
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`, 'i').test(name);
}

function hashedMatch(pattern: string, name: string): boolean {
  const [, magic, salt, hash] = pattern.split('|');
  if (magic !== '1' || salt === undefined || hash === undefined) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest();
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** Whether an entry's patterns name the host: any positive match and no negated one. */
function names(entry: Entry, name: string): boolean {
  let matched = false;
  for (const pattern of entry.patterns) {
    if (pattern.startsWith('|')) {
      if (hashedMatch(pattern, name)) matched = true;
    } else if (pattern.startsWith('!')) {
      if (wildcardMatch(pattern.slice(1), name)) return false;
    } else if (wildcardMatch(pattern, name)) matched = true;
  }
  return matched;
}

/** The entries for `name` (`host`, or `[host]:port` when the port is not 22). */
export function entriesFor(entries: readonly Entry[], name: string): Entry[] {
  return entries.filter((entry) => entry.marker !== 'cert-authority' && names(entry, name));
}

/** Key types known for the host, so the client can ask the server for one of them. */
export function knownKeyTypes(entries: readonly Entry[], name: string): string[] {
  return [
    ...new Set(
      entriesFor(entries, name)
        .filter((entry) => entry.marker === null)
        .map((entry) => entry.keyType),
    ),
  ];
}

/** `key` is the server's public key blob as sent in the key exchange. */
export function verifyHostKey(
  entries: readonly Entry[],
  name: string,
  key: Buffer,
): HostKeyVerdict {
  const relevant = entriesFor(entries, name);
  if (relevant.some((entry) => entry.marker === 'revoked' && entry.key.equals(key))) {
    return { ok: false, reason: 'revoked' };
  }
  const plain = relevant.filter((entry) => entry.marker === null);
  if (plain.some((entry) => entry.key.equals(key))) return { ok: true };
  return { ok: false, reason: plain.length === 0 ? 'unknown' : 'changed' };
}
