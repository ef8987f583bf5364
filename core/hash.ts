/**
 * Canonical JSON (sorted keys, no whitespace) and SHA-256, shared by the cache key, the
 * Idempotency-Key the CLI sends and the hash of stored tokens.
 */

/** JSON with object keys sorted at every depth, so equal values hash equally. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    // JSON.stringify(undefined) is undefined; an absent value canonicalises as null.
    return JSON.stringify(value) ?? "null";
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const record = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of Object.keys(record).sort()) {
    const item = record[key];
    if (item === undefined) continue;
    parts.push(`${JSON.stringify(key)}:${canonicalJson(item)}`);
  }
  return `{${parts.join(",")}}`;
}

/** The static form: no hasher object per call, which matters on paths run per request. */
export function sha256Hex(input: string | Uint8Array): string {
  return Bun.CryptoHasher.hash("sha256", input, "hex");
}

/** The 32 bytes themselves: comparing them costs less than making and comparing hex. */
export function sha256Digest(input: string | Uint8Array): Buffer {
  return Bun.CryptoHasher.hash("sha256", input) as Buffer;
}
