/**
 * A loop engine alone in its own process, on a database file another process shares: the
 * several-instances case without HTTP. `bun engine-process.ts <db file> <engine options as JSON>`
 * prints `ready <engine id>` once it has started, and stops cleanly on SIGTERM.
 */
import { createEngine } from "../../core/loop/engine.ts";
import { openDatabase } from "../../server/db.ts";
import { loadFixtureLoops } from "./loops.ts";

const [path = "", json = "{}"] = process.argv.slice(2);
const db = openDatabase(path);
const engine = createEngine({ sqlite: db.sqlite, loops: await loadFixtureLoops(), ...JSON.parse(json) });
await engine.start();
process.stdout.write(`ready ${engine.id}\n`);
process.on("SIGTERM", async () => {
  await engine.stop();
  db.close();
  process.exit(0);
});
