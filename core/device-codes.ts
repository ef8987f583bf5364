/**
 * The two codes of a device-link sign-in (RFC 8628 §6.1):
 *  - the device code, a bearer secret the CLI polls with: `hdc_` + 40 base62 characters
 *    (~238 random bits), stored only as its SHA-256;
 *  - the user code a person reads off a terminal and types into the console: 8 characters of
 *    the RFC's base-20 consonant alphabet (no vowels, so no words; no digits, so no 0/O or 1/I),
 *    shown as `XXXX-XXXX`. Its ~34.5 bits are enough because it is useful only to a signed-in
 *    admin, only for 10 minutes, and only to approve a sign-in the admin then receives nothing from.
 */
import { randomBase62 } from "./ids.ts";

export const DEVICE_CODE_PREFIX = "hdc_";
const DEVICE_CODE_PATTERN = /^hdc_[0-9A-Za-z]{40}$/;

export const USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";
export const USER_CODE_LENGTH = 8;

export function generateDeviceCode(): string {
  return `${DEVICE_CODE_PREFIX}${randomBase62(40)}`;
}

/** True when the string has the device-code shape. No I/O: junk never reaches the database. */
export const isWellFormedDeviceCode = (code: string): boolean => DEVICE_CODE_PATTERN.test(code);

/** 8 uniform characters of the alphabet, stored without the dash. */
export function generateUserCode(): string {
  let out = "";
  while (out.length < USER_CODE_LENGTH) {
    for (const byte of crypto.getRandomValues(new Uint8Array(USER_CODE_LENGTH * 2))) {
      // 240 = 20 * 12: rejecting the top of the byte range keeps every character equally likely.
      if (byte >= 240) continue;
      out += USER_CODE_ALPHABET[byte % 20];
      if (out.length === USER_CODE_LENGTH) break;
    }
  }
  return out;
}

/** `BCDFGHJK` → `BCDF-GHJK`, the form shown on the terminal and in the console. */
export const formatUserCode = (normalized: string): string => `${normalized.slice(0, 4)}-${normalized.slice(4)}`;
