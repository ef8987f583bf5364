/** `health runs list`: one page of runs, newest first, via tRPC runs.list. Needs an admin session. */
import { defineCommand } from "citty";
import { jsonArg, serverArg } from "../../lib/args.ts";
import { UsageError } from "../../errors.ts";
import { callServer } from "../../lib/api.ts";
import { requireSession } from "../../lib/auth.ts";
import { relativeTime } from "../../../core/relative-time.ts";
import { out, print, printJson, printList } from "../../lib/output.ts";
import {
  LOOP_ID_PATTERN,
  RUN_STATUSES,
  type RunStatus,
  runDuration,
  runFailure,
  styleStatus,
  tagOf,
} from "../../lib/runs.ts";

export default defineCommand({
  meta: {
    name: "list",
    description: `List the runs of your organization, newest first, one page at a time.

Columns: id, loop, status, started (UTC), duration (… while still going), tag (what triggered it:
token:<token name> or user:<email>). When there are more runs, the command for the next page is
printed; --json prints { runs, nextCursor } (pass nextCursor back as --cursor).
Statuses: ${RUN_STATUSES.join(", ")}.

Examples:
  health runs list
  health runs list --loop loop_intake --status errored --limit 50
  health runs list --json`,
  },
  args: {
    loop: { type: "string", description: "Only runs of this loop (loop_…)", valueHint: "loop_id" },
    status: { type: "string", description: "Only runs in this state (see below)", valueHint: "status" },
    limit: { type: "string", description: "Runs per page, 1 to 100 (default 20)", valueHint: "n" },
    cursor: { type: "string", description: "The next page, as printed by the previous one", valueHint: "cursor" },
    ...serverArg,
    ...jsonArg,
  },
  async run({ args }) {
    if (args.loop !== undefined && !LOOP_ID_PATTERN.test(args.loop)) {
      throw new UsageError(`--loop must be a loop id (loop_…); got "${args.loop}"`);
    }
    const status = RUN_STATUSES.find((s) => s === args.status);
    if (args.status !== undefined && status === undefined) {
      throw new UsageError(`--status must be one of ${RUN_STATUSES.join(", ")}`);
    }
    const limit = parseLimit(args.limit);
    if (args.cursor !== undefined && args.cursor.trim() === "") throw new UsageError("--cursor needs a value");
    const { server, client } = requireSession(args.server);
    const input = { loopId: args.loop, status, limit, cursor: args.cursor };
    const page = await callServer(server, () => client.runs.list.query(input), runFailure);
    if (args.json === true) {
      printJson(page);
      return;
    }
    const filtered = args.loop !== undefined || status !== undefined || args.cursor !== undefined;
    const now = Date.now();
    printList(page.runs, {
      empty: filtered ? "No runs match." : "No runs yet. Start one with health trigger <loop_id>",
      header: ["ID", "LOOP", "STATUS", "STARTED", "DURATION", "TAG"],
      row: (run, s) => [
        run.id,
        run.loopId,
        styleStatus(s, run.status),
        relativeTime(run.startedAt ?? run.createdAt),
        runDuration(run, now),
        tagOf(run),
      ],
    });
    if (page.nextCursor !== null) {
      print(out().dim(`More: ${nextPageCommand(args, status, limit, page.nextCursor)}`));
    }
  },
});

function parseLimit(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || n < 1 || n > 100) {
    throw new UsageError(`--limit must be a whole number from 1 to 100; got "${raw}"`);
  }
  return n;
}

/** The same filters with the next cursor, ready to paste. */
function nextPageCommand(
  args: { loop?: string; server?: string },
  status: RunStatus | undefined,
  limit: number | undefined,
  cursor: string,
): string {
  const parts = ["health runs list"];
  if (args.loop !== undefined) parts.push(`--loop ${args.loop}`);
  if (status !== undefined) parts.push(`--status ${status}`);
  if (limit !== undefined) parts.push(`--limit ${limit}`);
  if (args.server !== undefined) parts.push(`--server ${args.server}`);
  parts.push(`--cursor ${cursor}`);
  return parts.join(" ");
}
