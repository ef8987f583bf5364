/**
 * The planning audit writer's CPU per row: what the write-behind thread spends for every answered
 * planning call, on a file migrated like the server's. The writer as shipped (sixteen rows a
 * statement) next to one prepared insert per row, over the same batches (256 rows each, as the
 * log hands them over), interleaved rounds, medians.
 *
 *   bun bench/audit-writer.ts [--batches 400] [--rounds 5]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { AUDIT_COLUMNS, auditWriter } from "../plugins/planning/audit-log.ts";
import { openDatabase } from "../server/db.ts";

const { values } = parseArgs({ options: { batches: { type: "string" }, rounds: { type: "string" } } });
const batches = Number(values.batches ?? 400);
const rounds = Number(values.rounds ?? 5);

const row = () => [
  `cli-code-${Bun.randomUUIDv7()}`,
  crypto.randomUUID(),
  "acme",
  "token",
  "tok_0123456789",
  "build_agent",
  "hit",
  null,
  0,
  200,
  Date.now(),
];
const batchTexts = () => Array.from({ length: batches }, () => JSON.stringify(Array.from({ length: 256 }, row)));

type Writer = (batch: string) => void;
function rowByRow(sqlite: ReturnType<typeof openDatabase>["sqlite"]): Writer {
  const insert = sqlite.query<unknown, Array<string | number | null>>(
    `INSERT OR IGNORE INTO plan_audit (${AUDIT_COLUMNS.join(", ")}) VALUES (${AUDIT_COLUMNS.map(() => "?").join(", ")})`,
  );
  const writeAll = sqlite.transaction((rows: Array<Array<string | number | null>>) => {
    for (const r of rows) insert.run(...r);
  });
  return (batch) => writeAll(JSON.parse(batch));
}

/** µs per row for one fresh, migrated file. */
function measure(make: (sqlite: ReturnType<typeof openDatabase>["sqlite"]) => Writer): number {
  const dir = mkdtempSync(join(tmpdir(), "health-audit-bench-"));
  const db = openDatabase(`file:${join(dir, "audit.db")}`);
  try {
    const write = make(db.sqlite);
    const texts = batchTexts();
    const started = performance.now();
    for (const text of texts) write(text);
    return ((performance.now() - started) * 1000) / (batches * 256);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const shipped: number[] = [];
const single: number[] = [];
for (let i = 0; i < rounds; i++) {
  shipped.push(measure(auditWriter));
  single.push(measure(rowByRow));
}
console.log(`audit writer: ${batches} batches of 256 rows into a fresh file, median of ${rounds} interleaved rounds`);
console.log(`| writer | µs per row |\n|---|---|`);
console.log(`| one insert per row | ${median(single).toFixed(2)} |`);
console.log(`| sixteen rows a statement (shipped) | ${median(shipped).toFixed(2)} |`);
console.log(`shipped / one per row: ${((median(shipped) / median(single)) * 100).toFixed(1)}%`);
