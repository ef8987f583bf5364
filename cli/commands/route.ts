/** `health route`: a named model route for a task, saved (redacted) into the workspace manifest. */
import { defineCommand } from "citty";
import { CLINICAL_REDIRECT_MESSAGE } from "../../core/planner.ts";
import { inspect } from "../code/turn.ts";
import { renderMarkdown } from "../code/render.ts";
import { BlockedError, UsageError } from "../errors.ts";
import { log } from "../lib/log.ts";
import { colorEnabled, print, printJson } from "../lib/output.ts";
import { NAME_PATTERN, NAME_RULE, type Route, requireManifest, writeManifest } from "../lib/workspace.ts";

/** The gate's slug: what a plan may put after --task. */
const TASK_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const MAX_PROMPT_CHARS = 500;

export default defineCommand({
  meta: {
    name: "route",
    description: `Describe how a task is handled (its prompt and model) and, with --save --name, save it in health.json.

The prompt is redacted before it is saved (names, numbers, addresses… become [NAME], [SSN], …),
so the manifest never holds patient data. A prompt asking for clinical advice is refused (exit 3).
Without --save the route is only shown. --model names the model the gateway should use for this
task; the default "auto" is the gateway's auto-routing model.

Examples:
  health route --task intake --prompt "Handle intake requests on SMS and hand off to front-desk staff when unsure." --save --name intake-sms
  health route --task billing --prompt "Answer billing questions; escalate disputes to the billing team" --save --name billing --model openrouter/auto`,
  },
  args: {
    task: { type: "string", description: "The task this route handles (a slug)", required: true, valueHint: "task" },
    prompt: { type: "string", description: "How the task should be handled", required: true, valueHint: "text" },
    save: { type: "boolean", description: "Save the route in health.json (needs --name)" },
    name: { type: "string", description: "The route's name in health.json", valueHint: "name" },
    model: { type: "string", description: "The model for this route", default: "auto", valueHint: "model" },
    json: { type: "boolean", description: "Print the route as JSON" },
  },
  run({ args }) {
    if (!TASK_PATTERN.test(args.task))
      throw new UsageError(`--task must be a slug (letters, digits, '_', '-'); got "${args.task}"`);
    const prompt = args.prompt.trim();
    if (prompt === "") throw new UsageError("--prompt must not be empty");
    if (prompt.length > MAX_PROMPT_CHARS)
      throw new UsageError(`--prompt must be at most ${MAX_PROMPT_CHARS} characters`);
    if (args.name !== undefined && !NAME_PATTERN.test(args.name))
      throw new UsageError(`--name must be ${NAME_RULE}; got "${args.name}"`);
    if (args.save === true && args.name === undefined) throw new UsageError("--save needs --name <name>");
    if (args.model.trim() === "") throw new UsageError("--model must not be empty");

    const { intent, redacted } = inspect(prompt);
    if (intent === "clinical_blocked") {
      process.stderr.write(
        `${renderMarkdown(CLINICAL_REDIRECT_MESSAGE, { color: colorEnabled(process.stderr), columns: 100 })}\n`,
      );
      throw new BlockedError("This route's prompt asks for clinical advice, so it was not saved");
    }
    if (redacted !== prompt) log.warn("Patient identifiers in the prompt were redacted before saving");
    const route: Route = {
      task: args.task,
      prompt: redacted,
      model: args.model.trim(),
      saved_at: new Date().toISOString(),
    };

    if (args.save !== true || args.name === undefined) {
      if (args.json === true) printJson({ saved: false, route });
      else {
        print(`task    ${route.task}\nmodel   ${route.model}\nprompt  ${route.prompt}`);
        log.info("Not saved: add --save --name <name> to store it in health.json");
      }
      return;
    }
    const manifest = requireManifest();
    const replaced = args.name in manifest.routes;
    manifest.routes[args.name] = route;
    writeManifest(manifest);
    if (args.json === true) printJson({ saved: true, name: args.name, route });
    else
      log.success(
        `${replaced ? "Replaced" : "Saved"} route "${args.name}" (task ${route.task}, model ${route.model}) in health.json`,
      );
  },
});
