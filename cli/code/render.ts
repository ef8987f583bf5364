/** How a planned turn is shown in a terminal (one-shot mode). */
import { reframings } from "../../core/safety/categories.ts";
import { type Styles, colorEnabled, print, styles } from "../lib/output.ts";
import type { Turn } from "./turn.ts";

/**
 * A clinical block in one line: what fired and a builder task to ask for instead. The one-shot
 * command prints it alone; the REPL shows it in its plan pane.
 */
export function blockedLine(turn: Pick<Turn, "blocked_category">): string {
  const category = turn.blocked_category;
  const what = category === undefined ? "" : ` (${category.replaceAll("_", " ")})`;
  const instead =
    category === undefined ? "a builder task: data sourcing, eval design or deployment" : `"${reframings[category]}"`;
  return `Blocked: this asks for clinical advice${what}, which health does not give. Try instead: ${instead}`;
}

/** Markdown rendered for the terminal by Bun's own renderer; plain ASCII when colour is off. */
export function renderMarkdown(text: string, options: { color: boolean; columns: number }): string {
  return Bun.markdown.ansi(text, { colors: options.color, columns: options.columns }).replace(/\n+$/, "");
}

export function describeStep(step: Turn["tool_plan"][number], s: Styles): string[] {
  const number = `${step.step}.`;
  if (step.blocked_reason !== null) {
    return [`${s.red(`${number} ✖ blocked`)}  ${s.dim(step.command)}`, `   ${s.red(`reason: ${step.blocked_reason}`)}`];
  }
  const auth = step.requires_auth ? s.yellow(" (needs login)") : "";
  return [
    `${s.bold(number)} ${s.cyan(step.command)}`,
    `   ${s.dim(`${step.purpose}${step.purpose ? " " : ""}[${step.kind}]`)}${auth}`,
  ];
}

export function printTurn(turn: Turn, notes: { fallback?: string }): void {
  const color = colorEnabled(process.stdout);
  const s = styles(color);
  if (turn.intent === "clinical_blocked") {
    print(s.red(blockedLine(turn)));
    return;
  }
  const columns = Math.min(process.stdout.columns ?? 80, 100);
  const mode = turn.hosted ? "hosted" : notes.fallback !== undefined ? "offline (hosted failed)" : "offline";
  print(s.dim(`intent ${turn.intent} · ${mode}${turn.audit_id !== undefined ? ` · audit ${turn.audit_id}` : ""}`));
  print();
  print(renderMarkdown(turn.assistant_message, { color, columns }));
  print();
  if (turn.tool_plan.length === 0) {
    print(s.dim("No steps."));
    return;
  }
  print(s.bold("Plan"));
  for (const step of turn.tool_plan) for (const line of describeStep(step, s)) print(`  ${line}`);
  print();
  const first = turn.tool_plan.find((step) => step.blocked_reason === null);
  if (first !== undefined) {
    print(s.dim(`Run a step: health code --exec --session-id ${turn.session_id} --step ${first.step}`));
  }
}
