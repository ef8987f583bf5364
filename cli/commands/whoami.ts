/** `health whoami`: who the stored credentials are, as the server sees them. */
import { defineCommand } from "citty";
import { jsonArg, serverArg } from "../lib/args.ts";
import type { AccountResponse } from "../../schema/wire.ts";
import { CliError } from "../errors.ts";
import { callServer, fetchAccount, type Outputs, sessionExpired, sessionFailure, trpcClient } from "../lib/api.ts";
import { isExpired } from "../lib/auth.ts";
import { readCredentials } from "../lib/home.ts";
import { out, print, printJson, whenTime } from "../lib/output.ts";
import { credentialsFor, notLoggedIn, resolveServer } from "../lib/server.ts";

type SessionIdentity = Outputs["auth"]["me"];

export default defineCommand({
  meta: {
    name: "whoami",
    description: `Show who you are logged in as.

For an admin session: email, role and organization (auth.me). For a stored token: its company,
name, scopes and the remaining hosted-planning budget (/cli/account).

Examples:
  health whoami
  health whoami --json`,
  },
  args: {
    ...serverArg,
    ...jsonArg,
  },
  async run({ args }) {
    const credentials = readCredentials();
    const { url: server } = resolveServer(args.server, credentials);
    const stored = credentialsFor(server, credentials);
    if (stored === undefined || (stored.session === undefined && stored.token === undefined)) {
      throw new CliError(notLoggedIn(server, credentials), { hint: "Run health login" });
    }
    const session = stored.session;
    const token = stored.token;
    let identity: SessionIdentity | null = null;
    if (session !== undefined) {
      if (isExpired(session)) throw sessionExpired();
      identity = await callServer(server, () => trpcClient(server, session.secret).auth.me.query(), sessionFailure);
    }
    const account = token !== undefined ? await fetchAccount(server, token.secret) : null;
    if (args.json === true) {
      printJson({ server, session: identity, token: account });
      return;
    }
    printIdentity(server, identity, account);
  },
});

function printIdentity(server: string, identity: SessionIdentity | null, account: AccountResponse | null): void {
  const s = out();
  print(`${s.bold("Server")}   ${server}`);
  if (identity !== null) {
    print(
      `${s.bold("Admin")}    ${identity.email} (${identity.role} of ${identity.org.name}, org ${identity.org.slug})`,
    );
    print(`         session expires ${whenTime(identity.expiresAt)}`);
  }
  if (account !== null) {
    print(`${s.bold("Token")}    "${account.token_name}" of ${account.company || "no company"}`);
    print(`         scopes: ${account.scopes.join(", ") || "none"}`);
    print(
      `         server version ${account.server_version}; hosted planning left: ${account.rate_limit.minute.remaining}/min, ${account.rate_limit.day.remaining}/day`,
    );
  }
}
