/** Progress of `health db export|import`, on stderr: standard output may be the export itself. */
import { getTableName } from "drizzle-orm";
import { sqliteTables as tables, type TransferProgress } from "../../../server/db-transfer.ts";

const write = (line: string) => process.stderr.write(`${line}\n`);

export const stderrProgress: TransferProgress = {
  table: (table) => write(`… ${getTableName(tables[table])}`),
  rows: (table, done) => write(`  ${getTableName(tables[table])}: ${done.toLocaleString("en-US")} rows`),
};

/** "organizations 1, runs 1,204, …": the tables that had rows. */
export function summary(counts: Partial<Record<keyof typeof tables, number>>): string {
  const parts = Object.entries(counts)
    .filter(([, n]) => (n ?? 0) > 0)
    .map(([table, n]) => `${getTableName(tables[table as keyof typeof tables])} ${(n ?? 0).toLocaleString("en-US")}`);
  const total = Object.values(counts).reduce((sum, n) => sum + (n ?? 0), 0);
  return `${total.toLocaleString("en-US")} rows${parts.length > 0 ? ` (${parts.join(", ")})` : ""}`;
}
