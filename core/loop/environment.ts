/**
 * The environment loop code runs with: the server's, minus the `HEALTH_*` variables, which hold
 * the gateway's own configuration and secrets (system key, upstream API key, admin password).
 */
export function loopEnvironment(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && !key.startsWith("HEALTH_")) kept[key] = value;
  }
  return kept;
}
