/** `health setup`: create the first admin with the one-time code the server printed at start. */
import { defineCommand } from "citty";
import { serverArg } from "../lib/args.ts";
import { CliError, UsageError } from "../errors.ts";
import { callServer, trpcClient } from "../lib/api.ts";
import { resolveServer } from "../lib/server.ts";
import { isInteractive, promptSecret, readSecretFromStdin } from "../lib/stdin.ts";
import { storeSession } from "./login.ts";

export default defineCommand({
  meta: {
    name: "setup",
    description: `Create the first admin of a fresh server, and sign in as that admin.

It takes the one-time setup code a server prints at its first start while it has no admin
(24 letters and digits). The password (at least 12 characters) is read from standard input with
--password-stdin, or asked for in a terminal.

Examples:
  printf '%s' "$PASSWORD" | health setup --code Xk3tQ9mV2pL7sR4wN8cY1bZq --email admin@example.com --password-stdin
  health setup --server https://health.example.com --code Xk3tQ9mV2pL7sR4wN8cY1bZq --email admin@example.com`,
  },
  args: {
    ...serverArg,
    code: {
      type: "string",
      description: "The one-time setup code printed by the server",
      required: true,
      valueHint: "code",
    },
    email: { type: "string", description: "Email of the first admin", required: true, valueHint: "email" },
    "password-stdin": { type: "boolean", description: "Read the password from standard input" },
  },
  async run({ args }) {
    const server = resolveServer(args.server).url;
    let password: string;
    if (args["password-stdin"] === true) password = await readSecretFromStdin("password");
    else if (isInteractive()) password = await promptSecret("Password (12+ characters): ");
    else throw new UsageError("health setup needs --password-stdin when there is no terminal to ask in");
    const created = await callServer(
      server,
      () => trpcClient(server).auth.setup.mutate({ code: args.code, email: args.email, password }),
      (failure) => new CliError(failure.message),
    );
    await storeSession(server, created);
  },
});
