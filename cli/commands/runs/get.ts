/** `health runs get <run_id>`: one run with its input, output or error, and steps, via tRPC runs.get. */
import { defineCommand } from "citty";
import { jsonArg, serverArg } from "../../lib/args.ts";
import { UsageError } from "../../errors.ts";
import { callServer } from "../../lib/api.ts";
import { requireSession } from "../../lib/auth.ts";
import { printJson } from "../../lib/output.ts";
import { printRun, RUN_ID_PATTERN, runFailure } from "../../lib/runs.ts";

export default defineCommand({
  meta: {
    name: "get",
    description: `Show one run: its status, input, output or error, and each step.

Each step shows its name, status, attempts, when it started and how long it took, and its result
or error (long results are cut; --json prints the whole run record: { id, workflowInstanceId,
loopId, status, input, output, error, steps, trigger, createdAt, updatedAt, … }; input is absent
when the run was triggered without a body).

Examples:
  health runs get run_3vQ…
  health runs get run_3vQ… --json`,
  },
  args: {
    id: {
      type: "positional",
      description: "The run id (run_…), from health runs list or health trigger",
      required: true,
    },
    ...serverArg,
    ...jsonArg,
  },
  async run({ args }) {
    if (!RUN_ID_PATTERN.test(args.id)) throw new UsageError(`"${args.id}" is not a run id (run_…)`);
    const { server, client } = requireSession(args.server);
    const run = await callServer(server, () => client.runs.get.query({ id: args.id }), runFailure);
    if (args.json === true) {
      printJson(run);
      return;
    }
    printRun(run);
  },
});
