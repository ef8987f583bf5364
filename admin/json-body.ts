/**
 * Checks the Run dialog's JSON body as it is typed, with the server's own limits, so a body the
 * server would refuse is refused here first with a message next to the field.
 */

/** The trigger endpoint's limits (server/routes/loops.ts): 1 MiB of JSON, 64 levels deep. */
export const MAX_BODY_BYTES = 1024 * 1024;
export const MAX_BODY_DEPTH = 64;

export type BodyCheck =
  | { ok: true; empty: true }
  | { ok: true; empty: false; body: unknown }
  | { ok: false; message: string };

function depthOf(value: unknown): number {
  let deepest = 0;
  const pending: Array<[unknown, number]> = [[value, 1]];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    const [node, depth] = item;
    if (typeof node !== "object" || node === null) continue;
    deepest = Math.max(deepest, depth);
    if (deepest > MAX_BODY_DEPTH) return deepest;
    for (const child of Object.values(node)) pending.push([child, depth + 1]);
  }
  return deepest;
}

export function checkJsonBody(text: string): BodyCheck {
  if (text.trim() === "") return { ok: true, empty: true };
  if (new TextEncoder().encode(text).length > MAX_BODY_BYTES)
    return { ok: false, message: "The body is larger than 1 MiB." };
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : "it does not parse";
    return { ok: false, message: `Not valid JSON: ${reason}` };
  }
  if (depthOf(body) > MAX_BODY_DEPTH)
    return { ok: false, message: `The body is nested deeper than ${MAX_BODY_DEPTH} levels.` };
  return { ok: true, empty: false, body };
}
