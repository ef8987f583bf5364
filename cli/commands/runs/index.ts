/** `health runs`: the runs of your organization's loops (list, get). Needs an admin session. */
import { defineCommand } from "citty";

export default defineCommand({
  meta: {
    name: "runs",
    description: `The runs of your organization's loops: list them, or read one with its steps.

Needs an admin session (health login). Start a run with health trigger <loop_id>.

Examples:
  health runs list --loop loop_intake --status errored
  health runs get run_3vQ…
  health runs get run_3vQ… --json`,
  },
  subCommands: {
    list: () => import("./list.ts").then((m) => m.default),
    get: () => import("./get.ts").then((m) => m.default),
  },
});
