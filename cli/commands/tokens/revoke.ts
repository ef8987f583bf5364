/** `health tokens revoke <id>`: immediate and irreversible. */
import { defineCommand } from "citty";
import { jsonArg, serverArg } from "../../lib/args.ts";
import { callServer } from "../../lib/api.ts";
import { requireSession } from "../../lib/auth.ts";
import { log } from "../../lib/log.ts";
import { printJson } from "../../lib/output.ts";
import { tokenFailure } from "../../lib/tokens.ts";

export default defineCommand({
  meta: {
    name: "revoke",
    description: `Revoke an API token by id, immediately and for good.

It stops working on the next request; this cannot be undone (create a new token to restore
access). It stays in health tokens list, marked revoked.

Examples:
  health tokens revoke tok_3vQ…
  health tokens revoke tok_3vQ… --json`,
  },
  args: {
    id: { type: "positional", description: "The token id (tok_…), from health tokens list", required: true },
    ...serverArg,
    ...jsonArg,
  },
  async run({ args }) {
    const { server, client } = requireSession(args.server);
    const revoked = await callServer(server, () => client.tokens.revoke.mutate({ id: args.id }), tokenFailure);
    if (args.json === true) {
      printJson(revoked);
      return;
    }
    log.success(`Revoked token ${revoked.id} ("${revoked.name}", ${revoked.prefix}…${revoked.lastFour})`);
  },
});
