/**
 * Route-level JSON body parsing with the contract's limits: a body present but not JSON is
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

async function readLimited(request: Request, maxBytes: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null) {
    if (Number(declared) > maxBytes) throw tooLarge(maxBytes);
    // Bun enforces Content-Length, so the body cannot outgrow what was declared.
    return new Uint8Array(await request.arrayBuffer());
  }
  if (request.body === null) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body) {
    size += chunk.byteLength;
    if (size > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk);
  }
  return chunks.length === 1 && chunks[0] ? chunks[0] : Buffer.concat(chunks);
}

const tooLarge = (maxBytes: number) =>
  new HttpProblem("payload_too_large", `The request body is larger than ${maxBytes} bytes`);

function hasBody(request: Request): boolean {
  const length = request.headers.get("content-length");
  if (length !== null) return Number(length) > 0;
  return request.headers.has("transfer-encoding");
}

/** An Elysia `parse` hook for one route. */
export function jsonBody(maxBytes: number) {
  return async function parseJsonBody({ request }: { request: Request }): Promise<unknown> {
    if (!hasBody(request)) return new BoxedBody(undefined);
    const type = request.headers.get("content-type");
    if (type === null || !JSON_TYPE.test(type)) {
      throw new HttpProblem("unsupported_media_type", "The request body must be application/json");
    }
    const bytes = await readLimited(request, maxBytes);
    if (bytes.byteLength === 0) return new BoxedBody(undefined);
    try {
      return box(JSON.parse(new TextDecoder().decode(bytes)));
    } catch {
      throw new HttpProblem("invalid_request", "The request body is not valid JSON");
    }
  };
}
