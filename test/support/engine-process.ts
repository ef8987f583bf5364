/**
 * A loop engine alone in its own process, on a database another process shares: the
 * several-instances case without HTTP. `bun engine-process.ts <db file | postgres:// URL> <engine
 * options as JSON>` prints `ready <engine id>` once it has started, and stops cleanly on SIGTERM.
 */
import { createEngine, type EngineDatabase } from "../../core/loop/engine.ts";
import { openPostgres } from "../../server/db-postgres.ts";
import { openDatabase } from "../../server/db.ts";
import { loadFixtureLoops } from "./loops.ts";

const [path = "", json = "{}"] = process.argv.slice(2);
let database: EngineDatabase;
let close: () => Promise<void>;
if (path.startsWith("postgres://") || path.startsWith("postgresql://")) {
  const pg = await openPostgres(path);
  database = { postgres: pg.orm };
  close = () => pg.close();
} else {
  const db = openDatabase(path);
  database = { sqlite: db.sqlite };
  close = async () => db.close();
}
const engine = createEngine({ ...database, loops: await loadFixtureLoops(), ...JSON.parse(json) });
await engine.start();
process.stdout.write(`ready ${engine.id}\n`);
process.on("SIGTERM", async () => {
  await engine.stop();
  await close();
  process.exit(0);
});
