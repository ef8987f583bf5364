/** `health tokens`: API tokens of your organization (create, list, revoke). Needs an admin session. */
import { defineCommand } from "citty";

export default defineCommand({
  meta: {
    name: "tokens",
    description: `Manage the API tokens of your organization.

Needs an admin session (health login).
Scopes: loop:run (trigger any loop), loop:run:<loopId> (one loop, e.g. loop:run:loop_intake),
cli:run (hosted planning with health code --hosted).

Examples:
  health tokens create --name ci-trigger --scope loop:run:loop_intake
  health tokens list
  health tokens revoke tok_…`,
  },
  subCommands: {
    create: () => import("./create.ts").then((m) => m.default),
    list: () => import("./list.ts").then((m) => m.default),
    revoke: () => import("./revoke.ts").then((m) => m.default),
  },
});
