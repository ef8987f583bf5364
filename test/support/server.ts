/**
 * A real server on a random port with a real SQLite file in a temp dir, disposed with
 * `await using`.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { type Config, loadConfig } from "../../server/config.ts";
import { openDatabase } from "../../server/db.ts";
import { SqliteTokenStore } from "../../server/services/token-store-sqlite.ts";
import { type RunningServer, startServer } from "../../server/start.ts";
import { tempDir } from "./temp-dir.ts";

export { tempDir };

export const SYSTEM_KEY = "test-system-key-0123456789abcdef";

export interface TestServer extends RunningServer {
  dir: string;
  dbPath: string;
  systemKey: string;
  logs: string[];
  [Symbol.asyncDispose](): Promise<void>;
}

export function testConfig(dir: string, env: Record<string, string> = {}): Config {
  const loaded = loadConfig({
    PORT: "0",
    HEALTH_DATABASE_URL: `file:${join(dir, "health.db")}`,
    HEALTH_SYSTEM_KEY: SYSTEM_KEY,
    HEALTH_LOOPS_DIR: join(dir, "loops"),
    ...env,
  });
  if (!loaded.ok) throw new Error(loaded.problems.join("; "));
  return loaded.config;
}

/** An API token minted straight in the server's database (as an admin would in the console). */
export function mintToken(server: TestServer, scopes: string[], orgId = server.defaultOrg.id) {
  const db = openDatabase(`file:${server.dbPath}`);
  try {
    return new SqliteTokenStore(db).createSync({
      orgId,
      name: `t-${scopes.join(",")}`,
      scopes,
      actor: { kind: "system", id: "test" },
    });
  } finally {
    db.close();
  }
}

export async function startTestServer(env: Record<string, string> = {}, dir?: string): Promise<TestServer> {
  const ownDir = dir ?? tempDir();
  const logs: string[] = [];
  const config = testConfig(ownDir, env);
  const running = await startServer(config, { log: (m) => logs.push(m), flushIntervalMs: 50 });
  return Object.assign(running, {
    dir: ownDir,
    dbPath: join(ownDir, "health.db"),
    systemKey: config.HEALTH_SYSTEM_KEY ?? "",
    logs,
    async [Symbol.asyncDispose]() {
      await running.stop();
      if (dir === undefined) rmSync(ownDir, { recursive: true, force: true });
    },
  });
}
