/** `health tokens create`: mint a token; the only time its value is ever shown. */
import { defineCommand } from "citty";
import { jsonArg, serverArg } from "../../lib/args.ts";
import { UsageError } from "../../errors.ts";
import { callServer } from "../../lib/api.ts";
import { repeated } from "../../lib/argv.ts";
import { requireSession } from "../../lib/auth.ts";
import { log } from "../../lib/log.ts";
import { out, print, printJson } from "../../lib/output.ts";
import { tokenFailure } from "../../lib/tokens.ts";

export default defineCommand({
  meta: {
    name: "create",
    description: `Create an API token; its value is shown once.

Store the printed token in your secret manager right away: it cannot be shown again.
Give --scope once per scope: loop:run, loop:run:<loopId>, cli:run.
--json prints exactly { id, name, prefix, lastFour, scopes, orgId, token }.

Examples:
  health tokens create --name ci-trigger --scope loop:run:loop_intake
  health tokens create --name planner --scope cli:run --json`,
  },
  args: {
    ...serverArg,
    name: { type: "string", description: "A label for the token", required: true, valueHint: "name" },
    scope: { type: "string", description: "A scope; repeat for several", required: true, valueHint: "scope" },
    ...jsonArg,
  },
  async run({ args, rawArgs }) {
    const scopes = [...new Set(repeated(rawArgs, "scope"))];
    if (scopes.length === 0) throw new UsageError("Give at least one --scope");
    const { server, client } = requireSession(args.server);
    const created = await callServer(
      server,
      () => client.tokens.create.mutate({ name: args.name, scopes }),
      tokenFailure,
    );
    const shown = {
      id: created.id,
      name: created.name,
      prefix: created.prefix,
      lastFour: created.lastFour,
      scopes: created.scopes,
      orgId: created.orgId,
      token: created.token,
    };
    if (args.json === true) {
      printJson(shown);
      return;
    }
    const s = out();
    print(`${s.bold("Token")}   ${shown.token}`);
    print(`${s.bold("Id")}      ${shown.id}`);
    print(`${s.bold("Name")}    ${shown.name}`);
    print(`${s.bold("Scopes")}  ${shown.scopes.join(", ")}`);
    print(`${s.bold("Org")}     ${shown.orgId}`);
    log.warn(
      "Store this token now: it is shown only once and cannot be recovered. A lost token is replaced by creating a new one.",
    );
  },
});
