/** `health logout`: revoke the stored session on its server and forget every stored credential. */
import { defineCommand } from "citty";
import { trpcClient, trpcFailure } from "../lib/api.ts";
import { isExpired } from "../lib/auth.ts";
import { type Credentials, deleteCredentials, readCredentials } from "../lib/home.ts";
import { log } from "../lib/log.ts";

export default defineCommand({
  meta: {
    name: "logout",
    description: `Sign out and forget the stored credentials.

The stored admin session is revoked on its server, then $HEALTH_HOME/credentials.json is deleted.
A stored token (system key or cli:run token) is only forgotten locally: it stays valid until an
admin revokes it with health tokens revoke <id>.

Examples:
  health logout`,
  },
  args: {},
  async run() {
    let credentials: Credentials | undefined;
    try {
      credentials = readCredentials();
    } catch {
      // A damaged file cannot be used to revoke anything, but signing out must still work.
      deleteCredentials();
      log.success("Deleted the damaged credentials file");
      return;
    }
    if (credentials === undefined) {
      log.info("Not logged in; nothing to do");
      return;
    }
    const { server, session, token } = credentials;
    if (session !== undefined && !isExpired(session)) {
      try {
        await trpcClient(server, session.secret).auth.logout.mutate();
        log.success(`Revoked the session of ${session.email} on ${server}`);
      } catch (error) {
        const failure = trpcFailure(error);
        if (failure?.code === "UNAUTHORIZED") {
          // The server had already ended it (expired or revoked): nothing left to revoke.
          log.info(`The session of ${session.email} had already ended on ${server}`);
        } else {
          // Signing out locally must work even when the server is gone; say what was not done.
          const why = failure?.code === undefined ? "the server is not reachable" : failure.message;
          log.warn(
            `Could not revoke the session on the server (${why}); it expires on its own at ${session.expiresAt}`,
          );
        }
      }
    }
    deleteCredentials();
    log.success(`Deleted the stored credentials for ${server}`);
    if (token !== undefined) {
      log.info(
        `The token "${token.name ?? "token"}" is still valid on the server; an admin can revoke it with health tokens revoke <id>`,
      );
    }
  },
});
