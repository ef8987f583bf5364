/**
 * `npm run server`: configuration from the environment, one clear line per bad value, and a
 * graceful stop on SIGINT/SIGTERM that flushes what was written behind.
 */
import { loadConfig } from "./config.ts";
import { startServer } from "./start.ts";

const loaded = loadConfig(process.env);
if (!loaded.ok) {
  console.error("health: invalid configuration");
  for (const problem of loaded.problems) console.error(`  - ${problem}`);
  process.exit(2);
}

const running = await startServer(loaded.config);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    void running.stop().then(() => process.exit(0));
  });
}
