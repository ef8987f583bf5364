/** `health loops list`: `[{ id, name, orgId, triggerUrl }]` (CONTRACT). Needs an admin session. */
import { defineCommand } from "citty";
import { callServer, sessionFailure } from "../../lib/api.ts";
import { requireSession } from "../../lib/auth.ts";
import { out, print, printJson, table } from "../../lib/output.ts";

export default defineCommand({
  meta: {
    name: "list",
    description: `List the loops of your organization and the URL that triggers each.

Trigger one with an API token: curl -X POST -H "Authorization: Bearer $TOKEN" <triggerUrl>.

Examples:
  health loops list
  health loops list --json`,
  },
  args: {
    server: { type: "string", description: "Server URL", valueHint: "url" },
    json: { type: "boolean", description: "Print JSON" },
  },
  async run({ args }) {
    const { server, client } = requireSession(args.server);
    const loops = await callServer(server, () => client.loops.list.query(), sessionFailure);
    if (args.json === true) {
      printJson(
        loops.map((loop) => ({ id: loop.id, name: loop.name, orgId: loop.orgId, triggerUrl: loop.triggerUrl })),
      );
      return;
    }
    if (loops.length === 0) {
      print("No loops in this organization yet.");
      return;
    }
    const s = out();
    print(
      table(
        ["ID", "NAME", "TRIGGER URL"],
        loops.map((loop) => [loop.id, loop.name, loop.triggerUrl]),
        { headerStyle: s.bold },
      ),
    );
  },
});
