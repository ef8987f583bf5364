/**
 * `npm run server`: configuration from the environment, one clear line per bad value, and a
 * graceful stop on SIGINT/SIGTERM that flushes what was written behind.
 */
// Elysia serves Bun's development error page (with source lines) unless this is production.
process.env.NODE_ENV ??= "production";

const { loadConfig } = await import("./config.ts");
const { ListenError, startServer } = await import("./start.ts");

const loaded = loadConfig(process.env);
if (!loaded.ok) {
  console.error("health: invalid configuration");
  for (const problem of loaded.problems) console.error(`  - ${problem}`);
  process.exit(2);
}

const running = await startServer(loaded.config).catch((error: unknown) => {
  if (!(error instanceof ListenError)) throw error;
  console.error(`health: ${error.message}`);
  process.exit(1);
});

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    void running.stop().then(() => process.exit(0));
  });
}
