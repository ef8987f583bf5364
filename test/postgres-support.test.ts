/**
 * The throwaway PostgreSQL of test/support/postgres.ts: a real server on loopback, one database per
 * suite, and nothing left behind, even by a test process that crashes before disposing it.
 */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { SQL } from "bun";
import { hasPostgres, startPostgres, warnIfNoPostgres } from "./support/postgres.ts";

warnIfNoPostgres("the PostgreSQL test-support tests");

async function answers(port: number): Promise<boolean> {
  const sql = new SQL({ url: `postgres://postgres@127.0.0.1:${port}/postgres`, max: 1, connectionTimeout: 2 });
  try {
    await sql`SELECT 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.close();
  }
}

describe.skipIf(!hasPostgres)("test PostgreSQL", () => {
  test("starts on loopback, gives each suite its own database, and is gone after dispose", async () => {
    let port: number;
    let dir: string;
    {
      await using pg = await startPostgres();
      port = pg.port;
      dir = pg.dir;
      const [a, b] = [await pg.createDatabase(), await pg.createDatabase()];
      expect(a).not.toBe(b);
      const first = new SQL(a);
      const second = new SQL(b);
      await first`CREATE TABLE only_here (id int)`;
      const [{ n }] = await second`SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'only_here'`;
      expect(n).toBe(0);
      const [{ address }] = await first`SELECT inet_server_addr()::text AS address`;
      expect(address).toBe("127.0.0.1/32");
      await first.close();
      await second.close();
    }
    expect(existsSync(dir)).toBe(false);
    expect(await answers(port)).toBe(false);
  });

  for (const how of ["exit", "throw", "signal"]) {
    test(`a test process that dies (${how}) without disposing leaves no server and no directory`, async () => {
      const proc = Bun.spawn(["bun", join(import.meta.dir, "fixtures", "postgres-crash.ts"), how], {
        stdout: "pipe",
        stderr: "ignore",
      });
      const reader = proc.stdout.getReader();
      let out = "";
      while (!out.includes("\n")) {
        const chunk = await reader.read();
        if (chunk.done) break;
        out += new TextDecoder().decode(chunk.value);
      }
      if (how === "signal") proc.kill("SIGTERM");
      expect(await proc.exited).not.toBe(0);
      const [port, dir] = out.trim().split(" ");
      expect(Number(port)).toBeGreaterThan(0);
      expect(existsSync(dir ?? "")).toBe(false);
      expect(await answers(Number(port))).toBe(false);
    });
  }
});
