/**
 * Route-level JSON body parsing with the limits of docs/interface.md §7–8: a body present but not JSON is
 * 415, over the route's limit is 413 (checked on Content-Length first, then while streaming,
 * so an oversized body is never buffered whole), malformed JSON is 400. No body at all stays
 * `undefined` (a bodiless trigger gives `event.body === undefined`).
 */
import { HttpProblem } from "./problem.ts";

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * Elysia treats a falsy parser result as "not parsed" and tries its own parser on the spent
 * stream, so bodies that are not objects travel boxed. `undefined` inside means no body.
 */
export class BoxedBody {
  constructor(readonly value: unknown) {}
}

/** The JSON value a client sent, or `undefined` when it sent no body. */
export const bodyValue = (body: unknown): unknown => (body instanceof BoxedBody ? body.value : body);

const box = (value: unknown): unknown => (typeof value === "object" && value !== null ? value : new BoxedBody(value));

/** Reads a body sent without Content-Length (chunked), stopping as soon as it is too large. */
async function readChunked(request: Request, maxBytes: number): Promise<string> {
  if (request.body === null) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body) {
    size += chunk.byteLength;
    if (size > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function parseJson(text: string): unknown {
  try {
    return box(JSON.parse(text));
  } catch {
    throw invalidJson();
  }
}

const invalidJson = () => new HttpProblem("invalid_request", "The request body is not valid JSON");

const tooLarge = (maxBytes: number) =>
  new HttpProblem("payload_too_large", `The request body is larger than ${maxBytes} bytes`);

/** An Elysia `parse` hook for one route. */
export function jsonBody(maxBytes: number) {
  return async function parseJsonBody({ request }: { request: Request }): Promise<unknown> {
    const headers = request.headers;
    const declared = headers.get("content-length");
    if (declared === null ? !headers.has("transfer-encoding") : Number(declared) === 0) return new BoxedBody(undefined);
    const type = headers.get("content-type");
    if (type === null || !JSON_TYPE.test(type)) {
      throw new HttpProblem("unsupported_media_type", "The request body must be application/json");
    }
    if (declared === null) {
      const text = await readChunked(request, maxBytes);
      return text === "" ? new BoxedBody(undefined) : parseJson(text);
    }
    if (Number(declared) > maxBytes) throw tooLarge(maxBytes);
    // Bun reads exactly Content-Length bytes, so the body cannot outgrow what was declared;
    // its native JSON reader is the fastest way from bytes to a value.
    try {
      return box(await request.json());
    } catch {
      throw invalidJson();
    }
  };
}
