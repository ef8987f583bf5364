/** Liveness and readiness on the embedded default (one SQLite file, no Redis). */
import { expect, test } from "bun:test";
import { SERVER_VERSION } from "../server/version.ts";
import { startTestServer } from "./support/server.ts";

test("/healthz and /readyz: the database answers and Redis is off; no credentials needed", async () => {
  await using server = await startTestServer();
  for (const path of ["/healthz", "/readyz"]) {
    const response = await fetch(`${server.url}${path}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok", version: SERVER_VERSION, database: "ok", redis: "off" });
  }
});
