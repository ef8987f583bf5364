/**
 * A real OpenAI-compatible chat-completions server on loopback with scripted replies:
 * status codes, delays, raw bodies, or plan content. Unscripted calls get a good plan.
 */
export interface StubReply {
  status?: number;
  delayMs?: number;
  /** The assistant message content (a JSON plan, fenced text, junk…). */
  content?: string;
  /** A whole raw response body, instead of a completion. */
  raw?: string;
  headers?: Record<string, string>;
  model?: string;
  provider?: string;
}

export const GOOD_PLAN = {
  assistant_message: "I will scaffold an SMS intake loop and verify it.",
  tool_plan: [
    {
      kind: "scaffold",
      command: "health init intake --channel sms",
      purpose: "Create the workspace",
      requires_auth: false,
    },
    { kind: "verify", command: "health verify", purpose: "Check it", requires_auth: false },
  ],
};

export interface UpstreamStub {
  url: string;
  calls: Array<{ headers: Headers; body: unknown }>;
  script(...replies: StubReply[]): void;
  [Symbol.asyncDispose](): Promise<void>;
}

export function startUpstreamStub(): UpstreamStub {
  const queue: StubReply[] = [];
  const calls: UpstreamStub["calls"] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url);
      if (url.pathname !== "/v1/chat/completions") return new Response("not found", { status: 404 });
      calls.push({ headers: request.headers, body: await request.json() });
      const reply = queue.shift() ?? {};
      if (reply.delayMs) await Bun.sleep(reply.delayMs);
      const status = reply.status ?? 200;
      const body =
        reply.raw ??
        JSON.stringify({
          id: "cmpl-1",
          model: reply.model ?? "meta-llama/llama-3.3-70b-instruct:free",
          provider: reply.provider ?? "Chutes",
          choices: [{ index: 0, message: { role: "assistant", content: reply.content ?? JSON.stringify(GOOD_PLAN) } }],
        });
      return new Response(body, { status, headers: { "content-type": "application/json", ...reply.headers } });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/v1`,
    calls,
    script: (...replies) => queue.push(...replies),
    async [Symbol.asyncDispose]() {
      await server.stop(true);
    },
  };
}
