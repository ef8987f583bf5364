/**
 * The servers the planning bench measures, each started in its own process so the driver
 * never competes with them: `bare` is a plain Bun.serve that parses the JSON body and answers
 * a fixed plan; `gateway` is the real server with the whole plugin chain.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../server/config.ts";
import { startServer } from "../server/start.ts";

const kind = process.argv[2];
if (kind === "bare") {
  const answer = JSON.stringify({ model: "planner-v0", assistant_message: "ok", tool_plan: [] });
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      await request.json();
      return new Response(answer, { headers: { "content-type": "application/json" } });
    },
  });
  console.log(`READY http://127.0.0.1:${server.port}`);
} else if (kind === "gateway") {
  const dir = mkdtempSync(join(tmpdir(), "health-bench-"));
  const loaded = loadConfig({
    ...process.env,
    NODE_ENV: "production",
    PORT: "0",
    HEALTH_DATABASE_URL: `file:${join(dir, "bench.db")}`,
    HEALTH_RATE_LIMIT_PER_MINUTE: "1000000",
    HEALTH_RATE_LIMIT_PER_DAY: "100000000",
  });
  if (!loaded.ok) throw new Error(loaded.problems.join("; "));
  const running = await startServer(loaded.config, { log: () => {} });
  console.log(`READY ${running.url}`);
} else {
  console.error("usage: bun bench/targets.ts bare|gateway");
  process.exit(2);
}

// Exit cleanly on SIGINT so `bun --cpu-prof` can write its profile.
process.on("SIGINT", () => process.exit(0));
