/**
 * What the test helpers that start servers of their own (redis-server, PostgreSQL) share: a port
 * to give them, and one place to stop them when the test process ends without disposing of them.
 * An exit runs the hooks; a signal (Ctrl+C, a CI timeout's SIGTERM) skips exit hooks, so the
 * signals exit through them. The hooks are installed with the first server, so a test process
 * that never starts one keeps its signals. A SIGKILL cannot be caught.
 */

const stops = new Set<() => void>();
let hooked = false;

/**
 * Runs `stop` (synchronously) when the process exits or is stopped by a signal. The same function
 * registered twice runs once; call the result to forget it.
 */
export function atProcessEnd(stop: () => void): () => void {
  if (!hooked) {
    hooked = true;
    process.on("exit", () => {
      for (const run of stops) run();
      stops.clear();
    });
    for (const [signal, code] of [
      ["SIGINT", 130],
      ["SIGTERM", 143],
      ["SIGHUP", 129],
    ] as const) {
      process.once(signal, () => process.exit(code));
    }
  }
  stops.add(stop);
  return () => stops.delete(stop);
}

/** A port the kernel just handed out, free again once this returns (the server binds it next). */
export function freePort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}
