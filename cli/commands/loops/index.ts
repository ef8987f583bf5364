/** `health loops`: the loops of your organization on the server. */
import { defineCommand } from "citty";

export default defineCommand({
  meta: {
    name: "loops",
    description: `The loops of your organization on the server, with their trigger URLs.

Examples:
  health loops list
  health loops list --json`,
  },
  subCommands: {
    list: () => import("./list.ts").then((m) => m.default),
  },
});
