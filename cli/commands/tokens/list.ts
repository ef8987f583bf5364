/** `health tokens list`: every token of the organization, revoked ones kept and marked for audit. */
import { defineCommand } from "citty";
import { jsonArg, serverArg } from "../../lib/args.ts";
import { callServer } from "../../lib/api.ts";
import { requireSession } from "../../lib/auth.ts";
import { relativeTime } from "../../../core/relative-time.ts";
import { printJson, printList } from "../../lib/output.ts";
import { tokenFailure } from "../../lib/tokens.ts";

export default defineCommand({
  meta: {
    name: "list",
    description: `List the API tokens of your organization, revoked ones included.

Columns: id, name, prefix…last four, scopes, created, last used, status. Revoked tokens stay in
the list for audit, marked "revoked <date>" (and struck through when colour is on).

Examples:
  health tokens list
  health tokens list --json`,
  },
  args: {
    ...serverArg,
    ...jsonArg,
  },
  async run({ args }) {
    const { server, client } = requireSession(args.server);
    const tokens = await callServer(server, () => client.tokens.list.query(), tokenFailure);
    if (args.json === true) {
      printJson(tokens);
      return;
    }
    printList(tokens, {
      empty: "No tokens yet. Create one with health tokens create --name <name> --scope <scope>",
      header: ["ID", "NAME", "TOKEN", "SCOPES", "CREATED", "LAST USED", "STATUS"],
      row: (t) => [
        t.id,
        t.name,
        `${t.prefix}…${t.lastFour}`,
        t.scopes.join(","),
        relativeTime(t.createdAt),
        relativeTime(t.lastUsedAt),
        t.revokedAt === null ? "active" : `revoked ${relativeTime(t.revokedAt)}`,
      ],
      // Revoked tokens stay listed for the audit trail, struck through.
      style: (t, line, s) => (t.revokedAt !== null ? s.dim(s.strike(line)) : line),
    });
  },
});
