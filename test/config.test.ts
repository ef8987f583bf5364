import { describe, expect, test } from "bun:test";
import { SYSTEM_KEY, startTestServer, tempDir } from "./support/server.ts";
import { join } from "node:path";
import { loadConfig } from "../server/config.ts";

describe("configuration from the environment", () => {
  test("defaults are those of docs/interface.md §11", () => {
    const loaded = loadConfig({});
    expect(loaded).toEqual({
      ok: true,
      config: {
        PORT: 3000,
        HOST: "127.0.0.1",
        HEALTH_DATABASE_URL: "file:.health/health.db",
        HEALTH_UPSTREAM_MODEL: "openrouter/auto",
        HEALTH_UPSTREAM_TIMEOUT_MS: 20_000,
        HEALTH_UPSTREAM_RETRIES: 2,
        HEALTH_CACHE_TTL_SECONDS: 300,
        HEALTH_LOOPS_DIR: "loops",
        HEALTH_LOOP_CONCURRENCY: 1_000,
        HEALTH_LOOP_ORG_CONCURRENCY: 250,
        HEALTH_LOOP_BLOCKED_MS: 10_000,
        HEALTH_RATE_LIMIT_PER_MINUTE: 20,
        HEALTH_RATE_LIMIT_PER_DAY: 200,
        HEALTH_REDIS_TIMEOUT_MS: 1_000,
        HEALTH_AUDIT_RETENTION_DAYS: 90,
        HEALTH_RUN_RETENTION_DAYS: 30,
        HEALTH_USAGE_RETENTION_DAYS: 400,
        OTEL_SERVICE_NAME: "health",
      },
    });
  });

  test("every bad value gets its own clear line; empty counts as unset", () => {
    const loaded = loadConfig({
      PORT: "eighty",
      HOST: "",
      HEALTH_UPSTREAM_URL: "ftp://gateway.example",
      HEALTH_SYSTEM_KEY: "short",
      HEALTH_RATE_LIMIT_PER_MINUTE: "0",
      HEALTH_ADMIN_EMAIL: "not-an-email",
      HEALTH_REDIS_URL: "http://127.0.0.1:6379",
    });
    expect(loaded).toEqual({
      ok: false,
      problems: [
        "PORT must be a whole number",
        "HEALTH_SYSTEM_KEY must be at least 24 characters",
        "HEALTH_UPSTREAM_URL must use http or https",
        "HEALTH_ADMIN_EMAIL must be an email address",
        "HEALTH_RATE_LIMIT_PER_MINUTE must be at least 1",
        "HEALTH_REDIS_URL must be a redis:// or rediss:// URL",
      ],
    });
  });

  test("a database URL is an SQLite file or PostgreSQL; another scheme is refused, not taken for a file name", () => {
    for (const url of ["mysql://db/health", "redis://db/0", "http://db/health"]) {
      expect(loadConfig({ HEALTH_DATABASE_URL: url })).toEqual({
        ok: false,
        problems: [
          "HEALTH_DATABASE_URL must be an SQLite file (file:path or :memory:) or PostgreSQL (postgres://user:password@host:5432/database)",
        ],
      });
    }
    expect(loadConfig({ HEALTH_DATABASE_URL: "postgres://health@[db/health" })).toEqual({
      ok: false,
      problems: [
        "HEALTH_DATABASE_URL is not a valid postgres:// URL (percent-encode reserved characters in the user name and password)",
      ],
    });
    for (const url of [
      "file:.health/health.db",
      "file:///var/lib/health/health.db",
      "/tmp/h.db",
      ":memory:",
      "postgres://health@db.internal/health",
      "postgresql://health:s%40cret@db:5432/health",
    ]) {
      expect(loadConfig({ HEALTH_DATABASE_URL: url }).ok).toBe(true);
    }
  });

  test("the admin email and password come together", () => {
    expect(loadConfig({ HEALTH_ADMIN_EMAIL: "admin@example.com" })).toEqual({
      ok: false,
      problems: ["HEALTH_ADMIN_EMAIL and HEALTH_ADMIN_PASSWORD must be set together"],
    });
  });

  test("the server refuses to start on bad configuration: exit 2, one line per problem, nothing listening", async () => {
    const proc = Bun.spawn([process.execPath, join(import.meta.dir, "..", "server", "main.ts")], {
      env: { ...process.env, PORT: "99999", HEALTH_UPSTREAM_RETRIES: "9" },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(await proc.exited).toBe(2);
    expect(await new Response(proc.stderr).text()).toBe(
      "health: invalid configuration\n  - PORT must be at most 65535\n  - HEALTH_UPSTREAM_RETRIES must be at most 5\n",
    );
    expect(await new Response(proc.stdout).text()).toBe("");
  });

  test("a second server on a port already in use refuses to start with one clear line; the first keeps serving", async () => {
    await using first = await startTestServer();
    using dir = tempDir("health-second-server-");
    const proc = Bun.spawn([process.execPath, join(import.meta.dir, "..", "server", "main.ts")], {
      env: {
        ...process.env,
        PORT: String(first.port),
        HOST: "127.0.0.1",
        HEALTH_DATABASE_URL: `file:${join(dir, "health.db")}`,
        HEALTH_SYSTEM_KEY: SYSTEM_KEY,
        HEALTH_LOOPS_DIR: join(dir, "loops"),
      },
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      expect(await proc.exited).toBe(1);
      expect(await new Response(proc.stderr).text()).toBe(
        `health: port ${first.port} on 127.0.0.1 is already in use (another health server?). Stop it, or start this one with PORT=<another port>.\n`,
      );
    } finally {
      // Before this fix the second server shared the port (SO_REUSEPORT) and never exited.
      proc.kill();
    }
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
  });

  test("the start-up log names the console, and the server's root address leads to it", async () => {
    await using server = await startTestServer();
    expect(server.logs).toContain(`Console: ${server.url}/admin`);
    const root = await fetch(`${server.url}/`, { redirect: "manual" });
    expect(root.status).toBe(302);
    expect(root.headers.get("location")).toBe("/admin");
  });
});
