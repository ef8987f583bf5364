/** `health login`: store an admin session or a token for a server in HEALTH_HOME. */
import { defineCommand } from "citty";
import { CliError, UsageError } from "../errors.ts";
import { callServer, fetchAccount, trpcClient } from "../lib/api.ts";
import { loginWithDevice } from "../lib/device-login.ts";
import { saveCredential } from "../lib/home.ts";
import { log } from "../lib/log.ts";
import { resolveServer } from "../lib/server.ts";
import { isInteractive, promptSecret, readSecretFromStdin } from "../lib/stdin.ts";

export default defineCommand({
  meta: {
    name: "login",
    description: `Sign in to a health server (admin session or token).

With no credential flags, health login links this device: it prints a URL and a code, you approve
the code in the admin console (signed in there as yourself), and this CLI receives a session of
its own. It only prints and polls, so it works without a terminal too (SSH, containers, CI logs).
The code expires after 10 minutes; Ctrl+C cancels.

With --email and --password-stdin an admin signs in without a prompt (for scripts and CI);
--email alone asks for the password in a terminal. With --token (or --token-stdin) a system key
or a cli:run API token is stored for hosted planning; it is checked against the server's
/cli/account first. The credentials go to $HEALTH_HOME/credentials.json (mode 0600) with the
server (--server, HEALTH_URL, default http://127.0.0.1:3000), and are only ever sent to it.

Examples:
  health login --server https://health.example.org
  printf '%s' "$PASSWORD" | health login --server http://127.0.0.1:3000 --email admin@example.com --password-stdin
  health login --email admin@example.com
  health login --token "$HEALTH_SYSTEM_KEY"
  printf '%s' "$TOKEN" | health login --token-stdin`,
  },
  args: {
    server: {
      type: "string",
      description: "Server URL (default: HEALTH_URL, the stored server, or http://127.0.0.1:3000)",
      valueHint: "url",
    },
    email: { type: "string", description: "Admin email", valueHint: "email" },
    "password-stdin": { type: "boolean", description: "Read the password from standard input" },
    token: { type: "string", description: "A system key or cli:run token to store", valueHint: "token" },
    "token-stdin": { type: "boolean", description: "Read the token from standard input" },
  },
  async run({ args }) {
    const server = resolveServer(args.server).url;
    if (args.token !== undefined || args["token-stdin"] === true) {
      if (args.email !== undefined || args["password-stdin"] === true) {
        throw new UsageError("Use either --token or --email, not both");
      }
      const token = args["token-stdin"] === true ? await readSecretFromStdin("token") : (args.token ?? "").trim();
      if (token === "") throw new UsageError("--token needs a value");
      await loginWithToken(server, token);
      return;
    }
    if (args.email === undefined && args["password-stdin"] !== true) {
      await storeSession(server, await loginWithDevice(server));
      return;
    }
    const { email, password } = await askForPassword(args.email, args["password-stdin"] === true);
    await loginWithPassword(server, email, password);
  },
});

async function loginWithToken(server: string, token: string): Promise<void> {
  const account = await fetchAccount(server, token);
  const saved = saveCredential(server, {
    token: { secret: token, company: account.company || undefined, name: account.token_name, scopes: account.scopes },
  });
  const scopes = account.scopes.length > 0 ? account.scopes.join(", ") : "none";
  noteReplaced(saved.replacedServer);
  log.success(
    `Logged in to ${server} with token "${account.token_name}" of ${account.company || "no company"} (scopes: ${scopes})`,
  );
}

async function askForPassword(
  email: string | undefined,
  fromStdin: boolean,
): Promise<{ email: string; password: string }> {
  const given = email?.trim() ?? "";
  if (given === "")
    throw new UsageError(fromStdin ? "--password-stdin needs --email <email>" : "--email needs a value");
  if (fromStdin) return { email: given, password: await readSecretFromStdin("password") };
  if (!isInteractive()) {
    throw new UsageError(
      "health login --email needs a terminal to ask for the password",
      "Without one, pipe it in with --password-stdin, or run health login alone to approve this device in the console",
    );
  }
  return { email: given, password: await promptSecret(`Password for ${given}: `) };
}

export async function loginWithPassword(server: string, email: string, password: string): Promise<void> {
  const signedIn = await callServer(
    server,
    () => trpcClient(server).auth.login.mutate({ email, password }),
    (failure) => (failure.code === "UNAUTHORIZED" ? new CliError("Wrong email or password") : undefined),
  );
  await storeSession(server, signedIn);
}

/** Looks the new session up (who, which organization) and stores it. */
export async function storeSession(
  server: string,
  signedIn: { sessionToken: string; expiresAt: string },
): Promise<void> {
  const me = await callServer(server, () => trpcClient(server, signedIn.sessionToken).auth.me.query());
  const saved = saveCredential(server, {
    session: { secret: signedIn.sessionToken, email: me.email, expiresAt: signedIn.expiresAt, org: me.org.slug },
  });
  noteReplaced(saved.replacedServer);
  log.success(`Logged in to ${server} as ${me.email} (${me.role} of ${me.org.name})`);
}

/** Credentials are kept for one server at a time; say so when another one's were dropped. */
function noteReplaced(previous: string | undefined): void {
  if (previous !== undefined)
    log.info(`Forgot the stored login for ${previous}: credentials are kept for one server at a time`);
}
