/**
 * Preloaded by bunfig.toml before every test file. Shared helpers live in test/support/.
 * Tests never inherit the developer's environment for the gateway.
 */
for (const key of Object.keys(process.env)) {
  if (key.startsWith("HEALTH_")) delete process.env[key];
}
process.env.NODE_ENV = "test";
