/** `health tools`: what a loop can call. */
import { defineCommand } from "citty";

export default defineCommand({
  meta: {
    name: "tools",
    description: `The tools a loop can call.

Examples:
  health tools list
  health tools list --json`,
  },
  subCommands: {
    list: () => import("./list.ts").then((m) => m.default),
  },
});
