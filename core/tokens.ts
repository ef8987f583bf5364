/**
 * API token format (docs/interface.md §5.6): `hlth_` + 32 base62 characters (~190 random bits)
 * + a 6-character base62 CRC32 of the random part. The checksum lets us reject typos and
 * junk before touching the database, and the prefix makes leaked tokens easy to scan for.
 */
import { sha256Hex } from "./hash.ts";
import { randomBase62, toBase62 } from "./ids.ts";

export const TOKEN_PREFIX = "hlth_";
const RANDOM_CHARS = 32;
const CHECKSUM_CHARS = 6;
const TOKEN_PATTERN = /^hlth_[0-9A-Za-z]{38}$/;

function checksum(random: string): string {
  return toBase62(Bun.hash.crc32(random), CHECKSUM_CHARS);
}

export function generateToken(): string {
  const random = randomBase62(RANDOM_CHARS);
  return `${TOKEN_PREFIX}${random}${checksum(random)}`;
}

/** True when the string has the token shape and a valid checksum. No I/O. */
export function isWellFormedToken(token: string): boolean {
  if (!TOKEN_PATTERN.test(token)) return false;
  const random = token.slice(TOKEN_PREFIX.length, TOKEN_PREFIX.length + RANDOM_CHARS);
  return token.endsWith(checksum(random));
}

export const hashToken = (token: string): string => sha256Hex(token);

/** What is kept in clear so a person can recognise a token in a list. */
export function tokenDisplay(token: string): { prefix: string; lastFour: string } {
  return { prefix: token.slice(0, 8), lastFour: token.slice(-4) };
}
