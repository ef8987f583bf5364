/**
 * `health loops list`: `--json` prints `[{ id, name, orgId, triggerUrl }]` (the interface's
 * contract); the table adds the last 24 hours of runs, and modules the server skipped go to stderr.
 */
import { defineCommand } from "citty";
import { jsonArg, serverArg } from "../../lib/args.ts";
import { callServer, sessionFailure } from "../../lib/api.ts";
import { requireSession } from "../../lib/auth.ts";
import { colorEnabled, printError, printJson, printList, styles } from "../../lib/output.ts";

function lastDay({ runs, errored }: { runs: number; errored: number }): string {
  if (runs === 0) return "no runs";
  return `${runs === 1 ? "1 run" : `${runs} runs`}${errored > 0 ? `, ${errored} errored` : ""}`;
}

export default defineCommand({
  meta: {
    name: "list",
    description: `List the loops of your organization and the URL that triggers each.

Trigger one with an API token: curl -X POST -H "Authorization: Bearer $TOKEN" <triggerUrl>.
Modules of the loops folder that the server could not load are listed after the table, each with
the file:line:column to fix.

Examples:
  health loops list
  health loops list --json`,
  },
  args: {
    ...serverArg,
    ...jsonArg,
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
    const skipped = await callServer(server, () => client.loops.skipped.query(), sessionFailure);
    printList(loops, {
      empty: "No loops in this organization yet.",
      header: ["ID", "NAME", "LAST 24 H", "TRIGGER URL"],
      row: (loop) => [loop.id, loop.name, lastDay(loop.lastDay), loop.triggerUrl],
    });
    const errorStyles = styles(colorEnabled(process.stderr));
    // On stderr, so a script reading the table is not confused; the server skipped these at start.
    for (const problem of skipped) {
      printError(`${errorStyles.yellow("Skipped")} ${problem.location ?? problem.file}: ${problem.message}`);
    }
  },
});
