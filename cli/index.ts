/**
 * `health`: the command-line client of the gateway. Subcommands load lazily, so `health code`
 * never pays for the tRPC client and `health login` never loads the planner.
 */
import { defineCommand } from "citty";
import { CLI_VERSION } from "./lib/version.ts";

export default defineCommand({
  meta: {
    name: "health",
    version: CLI_VERSION,
    description: `Plan, scaffold, build and verify agent loops for healthcare builders (developer infrastructure only: no clinical advice; raw patient data never leaves your machine).

Examples:
  health code --prompt "build an SMS intake agent"      plan offline (no network)
  health login                                          sign in by approving a code in the console
  health login --token <system key or cli:run token>    store a token for hosted planning
  health code --hosted --prompt "build an intake agent" plan with the hosted planner
  health code                                           the interactive planner (REPL)
  health init intake --channel sms                      scaffold a workspace
  health trigger loop_intake --data '{"text":"hi"}'     run a loop with an API token
  health runs list --loop loop_intake                   its runs (admin session)
  health usage --window 7d                              planning calls, blocks, latency, runs

Environment: HEALTH_HOME (default ~/.health) holds credentials.json (0600) and an optional
settings.json ({ "company": "<slug>" } sets the X-Service-Company of hosted planning); HEALTH_URL
names the server (default http://127.0.0.1:3000; --server on a command wins); HEALTH_TOKEN and
HEALTH_ORG are the API token and organization of health trigger; NO_COLOR turns colour off.
Workspace state (sessions, audit log, runs, builds) lives in ./.health/.
Exit codes: 0 success, 1 failure, 2 usage error, 3 blocked by the gate or the safety boundary.`,
  },
  subCommands: {
    login: () => import("./commands/login.ts").then((m) => m.default),
    logout: () => import("./commands/logout.ts").then((m) => m.default),
    setup: () => import("./commands/setup.ts").then((m) => m.default),
    whoami: () => import("./commands/whoami.ts").then((m) => m.default),
    tokens: () => import("./commands/tokens/index.ts").then((m) => m.default),
    loops: () => import("./commands/loops/index.ts").then((m) => m.default),
    runs: () => import("./commands/runs/index.ts").then((m) => m.default),
    usage: () => import("./commands/usage.ts").then((m) => m.default),
    trigger: () => import("./commands/trigger.ts").then((m) => m.default),
    code: () => import("./commands/code.ts").then((m) => m.default),
    init: () => import("./commands/init.ts").then((m) => m.default),
    route: () => import("./commands/route.ts").then((m) => m.default),
    tools: () => import("./commands/tools/index.ts").then((m) => m.default),
    agent: () => import("./commands/agent/index.ts").then((m) => m.default),
    verify: () => import("./commands/verify.ts").then((m) => m.default),
    db: () => import("./commands/db/index.ts").then((m) => m.default),
  },
});
