/**
 * How step results and run outputs are stored: JSON text, or SQL NULL for `undefined`.
 *
 * `JSON.stringify` silently drops functions and symbols, turns NaN into null and a Map into `{}`,
 * and throws an unhelpful TypeError on BigInts and cycles. A replayed step would then return
 * something other than what the first execution saw, so values are checked first and refused
 * with the path of the offending part.
 */
import type { Result } from "../result.ts";

/** JSON text of `value`, `null` for `undefined`, or a message naming what cannot be stored. */
export function encodeStoredJson(value: unknown, what: string): Result<string | null, string> {
  if (value === undefined) return { ok: true, value: null };
  const problem = findUnserializable(value, "$", []);
  if (problem !== null) return { ok: false, error: `${what} is not JSON-serializable: ${problem}` };
  return { ok: true, value: JSON.stringify(value) };
}

/** The inverse of `encodeStoredJson`: SQL NULL is `undefined`, JSON `null` stays `null`. */
export function decodeStoredJson(text: string | null): unknown {
  return text === null ? undefined : JSON.parse(text);
}

function findUnserializable(value: unknown, path: string, ancestors: object[]): string | null {
  switch (typeof value) {
    case "string":
    case "boolean":
    case "undefined":
      return null;
    case "number":
      return Number.isFinite(value) ? null : `${path} is ${String(value)}, which JSON would turn into null`;
    case "bigint":
      return `${path} is a BigInt; convert it to a string or a number`;
    case "symbol":
      return `${path} is a symbol`;
    case "function":
      return `${path} is a function`;
    case "object":
      return findUnserializableObject(value, path, ancestors);
  }
  return `${path} has an unsupported type`;
}

function findUnserializableObject(value: object | null, path: string, ancestors: object[]): string | null {
  if (value === null) return null;
  if (ancestors.includes(value)) return `${path} refers back to one of its parents (a cycle)`;
  // Objects with toJSON (Date, URL, …) are stored as what toJSON gives, like JSON.stringify does.
  if ("toJSON" in value && typeof value.toJSON === "function") {
    return findUnserializable(value.toJSON(), path, ancestors);
  }
  if (value instanceof Map || value instanceof Set) {
    return `${path} is a ${value instanceof Map ? "Map" : "Set"}, which JSON would store as {}; convert it to an object or array`;
  }
  ancestors.push(value);
  try {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const problem = findUnserializable(value[i], `${path}[${i}]`, ancestors);
        if (problem !== null) return problem;
      }
      return null;
    }
    for (const [key, item] of Object.entries(value)) {
      const problem = findUnserializable(item, `${path}.${key}`, ancestors);
      if (problem !== null) return problem;
    }
    return null;
  } finally {
    ancestors.pop();
  }
}
