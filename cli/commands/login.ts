/** `health login`: store an admin session or a token for a server in HEALTH_HOME. */
import { defineCommand } from "citty";
import { CliError, UsageError } from "../errors.ts";
import { callServer, fetchAccount, trpcClient } from "../lib/api.ts";
import { saveCredential } from "../lib/home.ts";
import { log } from "../lib/log.ts";
import { resolveServer } from "../lib/server.ts";
import { isInteractive, promptLine, promptSecret, readSecretFromStdin } from "../lib/stdin.ts";

export default defineCommand({
  meta: {
    name: "login",
    description: `Sign in to a health server (admin session or token).

The credentials go to $HEALTH_HOME/credentials.json (mode 0600). With --email and --password-stdin an admin signs in without a prompt (for scripts and CI).
With --token (or --token-stdin) a system key or a cli:run API token is stored for hosted planning;
it is checked against the server's /cli/account first. With neither, email and password are
asked for in the terminal. The server (--server, HEALTH_URL, default http://127.0.0.1:3000) is
stored with the credentials, and they are only ever sent to that server.

Examples:
  printf '%s' "$PASSWORD" | health login --server http://127.0.0.1:3000 --email admin@example.com --password-stdin
  health login --token "$HEALTH_SYSTEM_KEY"
  printf '%s' "$TOKEN" | health login --token-stdin
  health login`,
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
  if (fromStdin) {
    if (email === undefined || email === "") throw new UsageError("--password-stdin needs --email <email>");
    return { email, password: await readSecretFromStdin("password") };
  }
  if (!isInteractive()) {
    throw new UsageError(
      "health login needs a terminal to ask for your email and password",
      "Without one, use --email <email> --password-stdin, or --token <token>",
    );
  }
  const asked = email ?? (await promptLine("Email: "));
  if (asked.trim() === "") throw new CliError("Cancelled: no email given");
  return { email: asked.trim(), password: await promptSecret("Password: ") };
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
