/**
 * docs/compose.yaml cannot run here (no Docker), so what can be checked is: every health instance
 * in it gets an environment the server's configuration check accepts (PostgreSQL, Redis, one
 * system key), the services it depends on and the balancer names exist, and nothing secret is
 * written in the file itself.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../server/config.ts";

const text = readFileSync(join(import.meta.dir, "..", "docs", "compose.yaml"), "utf8");
const secrets = { POSTGRES_PASSWORD: "a-password", HEALTH_SYSTEM_KEY: "a-system-key-of-32-characters-00" };
/** Compose's `${NAME:?message}` and `${NAME}`, as `docker compose` fills them in. */
const filled = text.replace(/\$\{(\w+)(?::\?[^}]*)?\}/g, (_, name: keyof typeof secrets) => secrets[name] ?? "");
const compose = Bun.YAML.parse(filled) as {
  services: Record<string, { environment?: Record<string, string>; depends_on?: unknown; command?: string[] }>;
  configs: { nginx: { content: string } };
};
const instances = Object.entries(compose.services).filter(([, service]) => service.command?.includes("server/main.ts"));

describe("docs/compose.yaml", () => {
  test("runs three instances, each with a configuration the server accepts", () => {
    expect(instances.map(([name]) => name)).toEqual(["health-1", "health-2", "health-3"]);
    for (const [, service] of instances) {
      const loaded = loadConfig(service.environment ?? {});
      expect(loaded).toMatchObject({ ok: true });
      if (!loaded.ok) continue;
      expect(loaded.config.HEALTH_DATABASE_URL).toStartWith("postgres://health:a-password@postgres:5432/");
      expect(loaded.config.HEALTH_REDIS_URL).toBe("redis://redis:6379");
      expect(loaded.config.HEALTH_SYSTEM_KEY).toBe(secrets.HEALTH_SYSTEM_KEY);
      expect(loaded.config.HOST).toBe("0.0.0.0");
    }
  });

  test("what the instances depend on, and every upstream of the balancer, is a service", () => {
    for (const [, service] of instances) {
      for (const dependency of Object.keys(service.depends_on as object))
        expect(compose.services).toHaveProperty(dependency);
    }
    const upstreams = [...compose.configs.nginx.content.matchAll(/server ([\w-]+):3000/g)].map((m) => m[1]);
    expect(upstreams).toEqual(instances.map(([name]) => name));
  });

  test("no secret is written in the file: they come from the environment", () => {
    expect(text).not.toContain(secrets.POSTGRES_PASSWORD);
    expect(text).toContain("${POSTGRES_PASSWORD:?");
    expect(text).toContain("${HEALTH_SYSTEM_KEY:?");
  });
});
