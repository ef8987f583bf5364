/** `health db export`: the server's SQLite database as one NDJSON file (server/db-transfer.ts). */
import { rmSync } from "node:fs";
import { defineCommand } from "citty";
import { CliError, UsageError } from "../../errors.ts";
import { exportDatabase, openOutput, TransferError } from "../../../server/db-transfer.ts";
import { databaseLocation, isPostgresUrl } from "../../../server/db.ts";
import { stderrProgress, summary } from "./progress.ts";

/** The server's default (server/config.ts), relative to the folder it runs in. */
const DEFAULT_DATABASE = "file:.health/health.db";

export default defineCommand({
  meta: {
    name: "export",
    description: `Write the server's SQLite database to one file, as of one moment.

Every row of every table, one JSON line each (NDJSON), read in one transaction: a running server
may keep writing meanwhile. Progress goes to stderr.

Examples:
  health db export --out health-export.ndjson
  health db export --from file:/srv/health/.health/health.db --out -`,
  },
  args: {
    from: {
      type: "string",
      description: `The SQLite database (default: HEALTH_DATABASE_URL, else ${DEFAULT_DATABASE})`,
      valueHint: "file:path",
    },
    out: {
      type: "string",
      description: "The file to write (refused if it exists), or - for stdout",
      valueHint: "file",
    },
  },
  async run({ args }) {
    if (args.out === undefined || args.out === "") {
      throw new UsageError("--out is required: the file to write, or - for standard output");
    }
    const from = args.from ?? process.env.HEALTH_DATABASE_URL ?? DEFAULT_DATABASE;
    if (isPostgresUrl(from)) {
      throw new UsageError(
        "--from must be an SQLite file (file:path): the export moves data from SQLite to PostgreSQL",
        "HEALTH_DATABASE_URL names PostgreSQL here; pass --from file:<the server's SQLite file>",
      );
    }
    let out: ReturnType<typeof openOutput>;
    try {
      out = openOutput(args.out);
    } catch (error) {
      throw new CliError(`cannot write ${args.out}: ${(error as Error).message}`);
    }
    const opened = new Promise<void>((resolve, reject) => {
      if (args.out === "-") resolve();
      out.once("open", () => resolve());
      out.once("error", (error: NodeJS.ErrnoException) =>
        reject(
          new CliError(
            error.code === "EEXIST" ? `${args.out} already exists` : `cannot write ${args.out}: ${error.message}`,
            error.code === "EEXIST" ? { hint: "choose another --out, or delete the old export first" } : {},
          ),
        ),
      );
    });
    await opened;
    process.stderr.write(`Exporting ${databaseLocation(from)}\n`);
    try {
      const counts = await exportDatabase(from, out, stderrProgress);
      if (args.out !== "-")
        await new Promise<void>((resolve, reject) =>
          out.end((error?: Error | null) => (error ? reject(error) : resolve())),
        );
      process.stderr.write(`Exported ${summary(counts)}${args.out === "-" ? "" : ` to ${args.out}`}\n`);
    } catch (error) {
      // No partial export is left to be mistaken for one (an import would refuse it anyway).
      if (args.out !== "-") {
        out.destroy();
        rmSync(args.out, { force: true });
      }
      if (error instanceof TransferError) throw new CliError(error.message);
      throw error;
    }
  },
});
