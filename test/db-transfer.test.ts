/**
 * `health db export|import` (server/db-transfer.ts), run as the real CLI: a server fills an
 * SQLite file (an admin, a token, triggered runs with their steps, planning calls with their
 * audit rows and usage), the export copies it to PostgreSQL and to a new SQLite file, and every
 * table reads back row for row. Imports that must write nothing: a file cut short, one with a row
 * that does not fit, a database that already holds data.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TRANSFER_ORDER } from "../server/db-transfer.ts";
import { type CliResult, cli } from "./fixtures/cli/cli.ts";
import { openPostgres } from "../server/db-postgres.ts";
import { openDatabase } from "../server/db.ts";
import { type DialectHarness, dialects, postgresHarness, sqliteHarness } from "./support/dialects.ts";
import { startPostgres, type TestPostgres } from "./support/postgres.ts";
import { postPlan } from "./support/planning.ts";
import { mintToken, startTestServer, tempDir } from "./support/server.ts";
import { startServerProcess } from "./support/server-process.ts";
import { adminEnv } from "./support/trpc.ts";

setDefaultTimeout(60_000);

const FIXTURES = join(import.meta.dir, "fixtures", "loops");
const dir = tempDir();
const source = `file:${join(dir, "health.db")}`;
const dump = join(dir, "export.ndjson");
/** Every table's rows in the source, by table. */
let expected: Map<string, unknown[]>;
/** An API token (loop:run, cli:run) minted on the source, and the runs it triggered there. */
let token: string;
let orgId: string;
const runIds: string[] = [];

const db = (args: string[], env: Record<string, string> = {}): Promise<CliResult> =>
  cli(["db", ...args], { cwd: dir, home: dir, env });

/** Rows of every transferred table, sorted so both dialects compare equal whatever their order. */
async function allRows(harness: Pick<DialectHarness, "rows">): Promise<Map<string, unknown[]>> {
  const out = new Map<string, unknown[]>();
  for (const table of TRANSFER_ORDER) {
    const rows = await harness.rows(table);
    out.set(table, rows.map((row) => JSON.stringify(row, Object.keys(row).sort())).sort());
  }
  return out;
}

beforeAll(async () => {
  // A server that did a bit of everything, then stopped (its write-behind flushed).
  {
    await using server = await startTestServer({ ...adminEnv, HEALTH_LOOPS_DIR: FIXTURES }, dir);
    token = mintToken(server, ["loop:run", "cli:run"]).token;
    orgId = server.defaultOrg.id;
    for (let i = 0; i < 5; i++) {
      const response = await fetch(`${server.url}/loop/${server.defaultOrg.id}/loop_echo`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "idempotency-key": `k${i}` },
        body: JSON.stringify({ i, note: "ünïcode ✓" }),
      });
      expect(response.status).toBe(202);
      runIds.push(((await response.json()) as { runId: string }).runId);
    }
    for (const runId of runIds) {
      for (let tries = 0; ; tries++) {
        const run = (await (
          await fetch(`${server.url}/loop/${server.defaultOrg.id}/loop_echo/runs/${runId}`, {
            headers: { authorization: `Bearer ${token}` },
          })
        ).json()) as { status: string };
        if (run.status === "complete") break;
        if (tries > 500) throw new Error(`run ${runId} did not complete: ${run.status}`);
        await Bun.sleep(20);
      }
    }
    for (let i = 0; i < 3; i++) expect((await postPlan(server.url, token)).status).toBe(200);
    await server.drain();
  }
  const sourceHarness = sqliteHarness(openDatabase(source));
  try {
    expected = await allRows(sourceHarness);
  } finally {
    await sourceHarness.close();
  }
});

afterAll(() => dir[Symbol.dispose]());

describe("health db export", () => {
  test("writes a header, every row, and a trailer with the counts; progress on stderr", async () => {
    const result = await db(["export", "--from", source, "--out", dump]);
    expect(result.stderr).toContain("Exported");
    expect(result.code).toBe(0);
    const lines = readFileSync(dump, "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({ format: "health-db-export", version: 1 });
    const trailer = lines.at(-1);
    expect(trailer.end).toBe(true);
    for (const table of TRANSFER_ORDER) expect(trailer.counts[table]).toBe(expected.get(table)?.length ?? -1);
    // The server did write runs, steps, planning audit and usage: the copy is not of an empty file.
    for (const table of ["runs", "runSteps", "planAudit", "usageMinutes", "apiTokens", "users", "idempotencyKeys"]) {
      expect(expected.get(table)?.length ?? 0).toBeGreaterThan(0);
    }
    expect(lines.some((line) => line.table === "loopEngines")).toBe(false);
  });

  test("refuses to overwrite a file, and a PostgreSQL source", async () => {
    writeFileSync(join(dir, "taken.ndjson"), "mine");
    const taken = await db(["export", "--from", source, "--out", "taken.ndjson"]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain("already exists");
    expect(readFileSync(join(dir, "taken.ndjson"), "utf8")).toBe("mine");
    const fromPg = await db(["export", "--from", "postgres://x@127.0.0.1/db", "--out", "pg.ndjson"]);
    expect(fromPg.code).toBe(2);
    expect(existsSync(join(dir, "pg.ndjson"))).toBe(false);
    const missing = await db(["export", "--from", "file:nowhere/health.db", "--out", "missing.ndjson"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("there is no SQLite database at nowhere/health.db");
    expect(existsSync(join(dir, "nowhere"))).toBe(false);
    expect(existsSync(join(dir, "missing.ndjson"))).toBe(false);
    const noOut = await db(["export", "--from", source]);
    expect(noOut.code).toBe(2);
    expect(noOut.stderr).toContain("--out is required");
  });
});

describe.each(dialects("health db import"))("health db import into $name", (dialect) => {
  let harness: DialectHarness;
  let url: string;
  let pg: TestPostgres | undefined;

  beforeAll(async () => {
    if (dialect.skip) return;
    if (dialect.name === "PostgreSQL") {
      pg = await startPostgres();
      url = await pg.createDatabase();
    } else {
      url = `file:${join(dir, `imported-${crypto.randomUUID()}.db`)}`;
    }
  });
  afterAll(async () => {
    await harness?.close();
    await pg?.[Symbol.asyncDispose]();
  });

  /** A fresh empty database of this dialect, for an import that must fail. */
  async function emptyDatabase(): Promise<string> {
    return pg === undefined ? `file:${join(dir, `empty-${crypto.randomUUID()}.db`)}` : pg.createDatabase();
  }

  test.skipIf(dialect.skip)("copies every row; the database reads back the same", async () => {
    const result = await db(["import", "--in", dump], { HEALTH_DATABASE_URL: url });
    expect(result.stderr).toContain("Imported");
    expect(result.code).toBe(0);
    harness = await openHarness(url);
    expect(await allRows(harness)).toEqual(expected);
    // The next admin audit row takes a new id, after the ones that came over.
    const audit = (await harness.rows("adminAudit")) as Array<{ id: number }>;
    expect(audit.length).toBeGreaterThan(0);
    const entry = { orgId: "org_x", actorKind: "system" as const, actorId: "t", action: "test", at: 1 };
    if (harness.dialect === "postgres") {
      const pgTables = await import("../schema/pg-tables.ts");
      await harness.db.orm.insert(pgTables.adminAudit).values(entry);
    } else {
      const tables = await import("../schema/tables.ts");
      harness.db.orm.insert(tables.adminAudit).values(entry).run();
    }
    const after = (await harness.rows("adminAudit")) as Array<{ id: number }>;
    expect(after.at(-1)?.id).toBe(Math.max(...audit.map((row) => row.id)) + 1);
  });

  test.skipIf(dialect.skip)("a server started on the copy knows the token, the runs, and runs new ones", async () => {
    await using instance = await startServerProcess(dir, `after-${dialect.name}`, {
      HEALTH_DATABASE_URL: url,
      HEALTH_LOOPS_DIR: FIXTURES,
      HEALTH_LOOP_THREADS: "1",
    });
    expect(instance.output()).toContain(
      dialect.name === "PostgreSQL" ? "Database: PostgreSQL" : "Database: the SQLite file",
    );
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    expect((await fetch(`${instance.url}/cli/account`, { headers })).status).toBe(200);
    const old = await fetch(`${instance.url}/loop/${orgId}/loop_echo/runs/${runIds[0]}`, { headers });
    expect(((await old.json()) as { status: string }).status).toBe("complete");
    // The same Idempotency-Key as a run made before the move replays that run.
    const replay = await fetch(`${instance.url}/loop/${orgId}/loop_echo`, {
      method: "POST",
      headers: { ...headers, "idempotency-key": "k0" },
      body: JSON.stringify({ i: 0, note: "ünïcode ✓" }),
    });
    expect(((await replay.json()) as { runId: string }).runId).toBe(runIds[0] ?? "");
    const fresh = await fetch(`${instance.url}/loop/${orgId}/loop_echo`, {
      method: "POST",
      headers,
      body: JSON.stringify({ after: "the move" }),
    });
    expect(fresh.status).toBe(202);
    const { runId } = (await fresh.json()) as { runId: string };
    for (let tries = 0; ; tries++) {
      const run = (await (
        await fetch(`${instance.url}/loop/${orgId}/loop_echo/runs/${runId}`, { headers })
      ).json()) as { status: string };
      if (run.status === "complete") break;
      if (tries > 500) throw new Error(`run ${runId} did not complete: ${run.status}`);
      await Bun.sleep(20);
    }
  });

  test.skipIf(dialect.skip)("a second import into the same database is refused and changes nothing", async () => {
    const again = await db(["import", "--in", dump, "--to", url]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already holds data");
    expect((await allRows(harness)).get("organizations")).toEqual(expected.get("organizations"));
  });

  test.skipIf(dialect.skip)("a file cut short, or with a row that does not fit, writes nothing", async () => {
    const lines = readFileSync(dump, "utf8").trimEnd().split("\n");
    const cut = join(dir, "cut.ndjson");
    writeFileSync(cut, `${lines.slice(0, -3).join("\n")}\n`);
    const target = await emptyDatabase();
    const short = await db(["import", "--in", cut, "--to", target]);
    expect(short.code).toBe(1);
    expect(short.stderr).toContain("cut short");

    const bad = join(dir, "bad.ndjson");
    const runLine = lines.findIndex((line) => line.startsWith('{"table":"runs"'));
    const broken = [...lines];
    broken[runLine] = JSON.stringify({ table: "runs", row: { ...JSON.parse(lines[runLine] ?? "{}").row, nope: 1 } });
    writeFileSync(bad, `${broken.join("\n")}\n`);
    const unknown = await db(["import", "--in", bad, "--to", target]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no column "nope"');

    const duplicate = join(dir, "dup.ndjson");
    const doubled = [...lines];
    doubled.splice(runLine, 0, lines[runLine] ?? "");
    writeFileSync(duplicate, `${doubled.join("\n")}\n`);
    const twice = await db(["import", "--in", duplicate, "--to", target]);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain("wrote nothing");
    // Whatever went before the bad line was rolled back: the same database takes the good file.
    const good = await db(["import", "--in", dump, "--to", target]);
    expect(good.code).toBe(0);
  });
});

async function openHarness(url: string): Promise<DialectHarness> {
  return url.startsWith("postgres") ? postgresHarness(await openPostgres(url)) : sqliteHarness(openDatabase(url));
}
