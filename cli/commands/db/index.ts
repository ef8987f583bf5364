/** `health db`: move a server's data from its SQLite file to PostgreSQL (run where the server runs). */
import { defineCommand } from "citty";

export default defineCommand({
  meta: {
    name: "db",
    description: `Move a server's data from its SQLite file to PostgreSQL.

For running instances on several hosts (docs/deploy.md). Run it on the server's host, from the
server's folder: it opens the databases directly, not through a server.

  1. health db export --out health-export.ndjson        (a consistent snapshot; the server may run)
  2. stop the server, and export again if it wrote since
  3. HEALTH_DATABASE_URL=postgres://… health db import --in health-export.ndjson
  4. start the instances with HEALTH_DATABASE_URL=postgres://…

The export holds everything the database does (loop run inputs and outputs included): it is
written readable by you only (0600); keep it as you keep the database, and delete it after.

Examples:
  health db export --out health-export.ndjson
  health db export --from file:/srv/health/.health/health.db --out - | gzip > export.ndjson.gz
  health db import --in health-export.ndjson --to postgres://health@db.internal:5432/health`,
  },
  subCommands: {
    export: () => import("./export.ts").then((m) => m.default),
    import: () => import("./import.ts").then((m) => m.default),
  },
});
