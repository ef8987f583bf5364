/**
 * The usage rollups' writer over PostgreSQL (the recorder and the SQLite writer: usage.ts). A batch
 * is one `INSERT … ON CONFLICT … DO UPDATE` whose arithmetic is in SQL: counts add, and histograms
 * (JSON arrays of bucket counts, stored as text) add bucket by bucket. The conflicting row is
 * locked by the upsert itself, so writers of several instances merging the same minute at once
 * each add to what the other committed and nothing is lost (test/usage-writer.test.ts races them).
 * The batch's rows are sorted by key, so two writers lock shared rows in the same order and cannot
 * deadlock. Asynchronous: it runs on the event loop (the write-behind thread stays SQLite-only).
 */
import { type SQL, sql } from "drizzle-orm";
import type { PgDb } from "../db-postgres.ts";
import { type Pending, USAGE_COUNTS, USAGE_HISTOGRAMS } from "./usage.ts";

const KEY = ["orgId", "minute", "company", "tokenId", "loopId"] as const;
const COLUMNS = ["minute", "orgId", "company", "tokenId", "loopId", ...USAGE_COUNTS, ...USAGE_HISTOGRAMS];
const q = (column: string) => `"${column}"`;

/** The sum of two histograms' texts, bucket by bucket, as `[1,2,3]` (SQLite's writer's form). */
function addBuckets(stored: string, added: string): string {
  return `CASE WHEN ${added} IS NULL THEN ${stored} WHEN ${stored} IS NULL THEN ${added} ELSE (
    SELECT '[' || string_agg((COALESCE(s.n::bigint, 0) + COALESCE(a.n::bigint, 0))::text, ',' ORDER BY COALESCE(s.i, a.i)) || ']'
    FROM json_array_elements_text(${stored}::json) WITH ORDINALITY AS s(n, i)
    FULL JOIN json_array_elements_text(${added}::json) WITH ORDINALITY AS a(n, i) ON s.i = a.i) END`;
}

const UPSERT_TAIL = sql.raw(
  `ON CONFLICT (${KEY.map(q).join(", ")}) DO UPDATE SET ${[
    ...USAGE_COUNTS.map((c) => `${q(c)} = usage_minutes.${q(c)} + excluded.${q(c)}`),
    ...USAGE_HISTOGRAMS.map((h) => `${q(h)} = ${addBuckets(`usage_minutes.${q(h)}`, `excluded.${q(h)}`)}`),
  ].join(", ")}`,
);

const compare = (a: Pending, b: Pending) => {
  for (const k of KEY) {
    const x = a[k];
    const y = b[k];
    if (x < y) return -1;
    if (x > y) return 1;
  }
  return 0;
};

export function postgresUsageWriter(db: PgDb): (batch: string) => Promise<void> {
  return async (batch) => {
    const rows = (JSON.parse(batch) as Pending[]).sort(compare);
    if (rows.length === 0) return;
    const values: SQL[] = rows.map((row) => {
      const cells = [
        row.minute,
        row.orgId,
        row.company,
        row.tokenId,
        row.loopId,
        ...USAGE_COUNTS.map((c) => row.counts[c]),
        ...USAGE_HISTOGRAMS.map((h) => {
          const counts = row.histograms[h];
          return counts === undefined ? null : JSON.stringify(counts);
        }),
      ];
      return sql`(${sql.join(
        cells.map((cell) => sql`${cell}`),
        sql`, `,
      )})`;
    });
    await db.orm.execute(
      sql`INSERT INTO usage_minutes (${sql.raw(COLUMNS.map(q).join(", "))}) VALUES ${sql.join(values, sql`, `)} ${UPSERT_TAIL}`,
    );
  };
}
