/** `health agent`: build the workspace's loops. */
import { defineCommand } from "citty";

export default defineCommand({
  meta: {
    name: "agent",
    description: `Build the loops of the workspace.

Examples:
  health agent build`,
  },
  subCommands: {
    build: () => import("./build.ts").then((m) => m.default),
  },
});
