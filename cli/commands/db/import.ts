/** `health db import`: an export of `health db export` into an empty database (server/db-transfer.ts). */
import { existsSync } from "node:fs";
import { defineCommand } from "citty";
import { CliError, UsageError } from "../../errors.ts";
import { importDatabase, openInput, TransferError } from "../../../server/db-transfer.ts";
import { databaseLocation } from "../../../server/db.ts";
import { stderrProgress, summary } from "./progress.ts";

export default defineCommand({
  meta: {
    name: "import",
    description: `Load an export into an empty database, all or nothing.

The file \`health db export\` wrote, into PostgreSQL (postgres://…) or an SQLite file. A file
cut short, or a row that does not fit, leaves the database as it was. A database a server has
already started on holds data and is refused. Put the password in HEALTH_DATABASE_URL rather
than on the command line.

Examples:
  HEALTH_DATABASE_URL=postgres://health:…@db.internal/health health db import --in health-export.ndjson
  gunzip -c export.ndjson.gz | health db import --in - --to postgres://health@localhost/health`,
  },
  args: {
    in: { type: "string", description: "The export to read, or - for stdin", valueHint: "file" },
    to: {
      type: "string",
      description: "The database to fill (default: HEALTH_DATABASE_URL)",
      valueHint: "postgres://…",
    },
  },
  async run({ args }) {
    if (args.in === undefined || args.in === "") {
      throw new UsageError("--in is required: the file `health db export` wrote, or - for standard input");
    }
    const to = args.to ?? process.env.HEALTH_DATABASE_URL;
    if (to === undefined || to === "") {
      throw new UsageError("--to is required (or HEALTH_DATABASE_URL): the database to import into, e.g. postgres://…");
    }
    if (args.in !== "-" && !existsSync(args.in)) throw new CliError(`${args.in} does not exist`);
    process.stderr.write(`Importing into ${databaseLocation(to)}\n`);
    try {
      const counts = await importDatabase(openInput(args.in), to, stderrProgress);
      process.stderr.write(`Imported ${summary(counts)}\n`);
    } catch (error) {
      if (error instanceof TransferError) throw new CliError(error.message);
      // The database's own words: drizzle's wrapper would print the whole statement, rows included.
      let cause = error;
      while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
      throw new CliError(
        `the import failed and wrote nothing: ${cause instanceof Error ? cause.message : String(cause)}`,
      );
    }
  },
});
