/** `health tools list`: the durable primitives and the built-in integrations, offline. */
import { defineCommand } from "citty";
import { jsonArg } from "../../lib/args.ts";
import { out, print, printJson, table } from "../../lib/output.ts";
import { tools } from "../../lib/tools.ts";

export default defineCommand({
  meta: {
    name: "list",
    description: `List the tools a loop can call: step.do, step.sleep, step.sleepUntil and the built-in integrations.

The integrations are the stand-in senders health init scaffolds for each channel: they make no
network call until you put your provider's API in them. No network is used by this command.

Examples:
  health tools list
  health tools list --json`,
  },
  args: {
    ...jsonArg,
  },
  run({ args }) {
    if (args.json === true) {
      printJson(tools);
      return;
    }
    const s = out();
    print(
      table(
        ["TOOL", "KIND", "FROM", "WHAT IT DOES"],
        tools.map((tool) => [tool.name, tool.kind, tool.source, tool.description]),
        { headerStyle: s.bold },
      ),
    );
  },
});
