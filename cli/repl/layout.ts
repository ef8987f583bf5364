/**
 * The REPL's screen as a pure function of its state: a status bar (mode always visible), the
 * chat on the left, the current turn's plan in a sidebar on the right (stacked below the chat on
 * narrow terminals), and the input line. Every line is cut and padded to the terminal's width by
 * display columns, so ANSI styling and wide characters never break the layout.
 */
import { blockedLine, renderMarkdown } from "../code/render.ts";
import type { Mode } from "../code/store.ts";
import type { Turn } from "../code/turn.ts";
import { type Styles, styles } from "../lib/output.ts";

export interface ChatEntry {
  who: "you" | "health" | "notice";
  text: string;
  tone?: "info" | "warn" | "error";
}

export interface ReplView {
  mode: Mode;
  /** The server hosted turns go to, shown in hosted mode. */
  server: string | undefined;
  sessionId: string;
  turns: number;
  chat: readonly ChatEntry[];
  plan: Turn | undefined;
  input: string;
  busy: boolean;
}

export interface Frame {
  lines: string[];
  /** 1-based position of the cursor on the input line. */
  cursor: { row: number; col: number };
}

const SIDEBAR_MIN_COLS = 60;

/** Cuts to `width` columns and pads to it; closes any styling so it cannot bleed into the next cell. */
export function fit(line: string, width: number, color: boolean): string {
  if (width <= 0) return "";
  const cut = Bun.stringWidth(line) > width ? Bun.sliceAnsi(line, 0, width) : line;
  const padded = cut + " ".repeat(Math.max(0, width - Bun.stringWidth(cut)));
  return color ? `${padded}\x1b[0m` : padded;
}

function wrap(text: string, width: number): string[] {
  if (width <= 1) return [text];
  return Bun.wrapAnsi(text, width, { hard: true, trim: false }).split("\n");
}

/** Wraps `text` after `first`, indenting continuation lines by `indent` columns. */
function hang(first: string, text: string, width: number, indent: number): string[] {
  const room = Math.max(1, width - indent);
  const [head = "", ...rest] = wrap(text, room);
  return [`${first}${head}`, ...rest.map((line) => `${" ".repeat(indent)}${line}`)];
}

function statusBar(view: ReplView, cols: number, s: Styles, color: boolean): string {
  const mode = view.mode === "hosted" ? `mode: HOSTED → ${view.server ?? "?"}` : "mode: OFFLINE (no network)";
  const badge = color
    ? s.bold(view.mode === "hosted" ? s.green(` ● ${mode} `) : s.yellow(` ● ${mode} `))
    : ` [${mode}] `;
  const left = ` health code ${badge}`;
  const middle = ` session ${view.sessionId.slice(0, 8)} · turn ${view.turns} `;
  const right = " Ctrl+H offline/hosted · Esc quit ";
  const used = Bun.stringWidth(left) + Bun.stringWidth(middle) + Bun.stringWidth(right);
  const gap = " ".repeat(Math.max(1, cols - used));
  const line = fit(`${left}${middle}${gap}${right}`, cols, false);
  return color ? `\x1b[7m${line}\x1b[0m` : line;
}

function chatLines(view: ReplView, width: number, s: Styles, color: boolean): string[] {
  const lines: string[] = [];
  if (view.chat.length === 0) {
    lines.push(s.dim("Describe what you want to build; each turn is classified, redacted and planned."));
    lines.push(s.dim('For example: "build an SMS intake agent for our clinic".'));
  }
  for (const entry of view.chat) {
    if (lines.length > 0) lines.push("");
    if (entry.who === "you") {
      const [first = "", ...rest] = wrap(entry.text, Math.max(1, width - 6));
      lines.push(`${s.bold(s.cyan("you ›"))} ${first}`, ...rest.map((line) => `      ${line}`));
    } else if (entry.who === "health") {
      lines.push(s.bold("health ›"));
      const body = renderMarkdown(entry.text, { color, columns: Math.max(10, width - 2) });
      for (const line of body.split("\n")) lines.push(...wrap(`  ${line}`, width));
    } else {
      const mark = entry.tone === "error" ? s.red("✖") : entry.tone === "warn" ? s.yellow("⚠") : s.dim("ℹ");
      lines.push(...wrap(`${mark} ${entry.tone === "info" ? s.dim(entry.text) : entry.text}`, width));
    }
  }
  if (view.busy)
    lines.push("", s.dim(view.mode === "hosted" ? "health › asking the hosted planner…" : "health › planning…"));
  return lines;
}

function planLines(view: ReplView, width: number, s: Styles): string[] {
  const turn = view.plan;
  const lines: string[] = [s.bold("PLAN")];
  if (turn === undefined) {
    lines.push(
      ...wrap(s.dim("No plan yet. Each turn's plan shows here, numbered as health code --exec runs it."), width),
    );
    return lines;
  }
  lines.push(...wrap(s.dim(`${turn.intent} · ${turn.hosted ? "hosted" : "offline"}`), width));
  if (turn.audit_id !== undefined) lines.push(...wrap(s.dim(turn.audit_id), width));
  lines.push("");
  if (turn.tool_plan.length === 0) {
    lines.push(
      ...wrap(turn.intent === "clinical_blocked" ? s.red(blockedLine(turn)) : s.dim("No steps for this turn."), width),
    );
    return lines;
  }
  for (const step of turn.tool_plan) {
    const number = `${step.step}.`.padEnd(3);
    if (step.blocked_reason !== null) {
      lines.push(...hang(s.red(number), s.red("✖ blocked"), width, 3));
      lines.push(...hang("   ", s.dim(step.command), width, 3));
      lines.push(...hang("   ", s.red(step.blocked_reason), width, 3));
    } else {
      lines.push(...hang(s.bold(number), s.cyan(step.command), width, 3));
      lines.push(
        ...hang("   ", s.dim(`${step.purpose} [${step.kind}]${step.requires_auth ? " (needs login)" : ""}`), width, 3),
      );
    }
  }
  lines.push("");
  lines.push(...wrap(s.dim(`Run a step: health code --exec --session-id ${turn.session_id} --step <n>`), width));
  return lines;
}

/** The last `height` lines, padded at the top: the newest text stays in view. */
function bottom(lines: readonly string[], height: number): string[] {
  const tail = lines.slice(Math.max(0, lines.length - height));
  return [...Array.from({ length: height - tail.length }, () => ""), ...tail];
}

function top(lines: readonly string[], height: number): string[] {
  const head = lines.slice(0, height);
  return [...head, ...Array.from({ length: height - head.length }, () => "")];
}

export function renderFrame(view: ReplView, size: { cols: number; rows: number; color: boolean }): Frame {
  const { cols, color } = size;
  const rows = Math.max(size.rows, 6);
  const s = styles(color);
  const bodyHeight = rows - 3;
  const lines: string[] = [statusBar(view, cols, s, color)];

  if (cols >= SIDEBAR_MIN_COLS) {
    const sideWidth = Math.min(60, Math.max(28, Math.floor(cols * 0.4)));
    const chatWidth = cols - sideWidth - 3;
    const chat = bottom(chatLines(view, chatWidth, s, color), bodyHeight);
    const side = top(planLines(view, sideWidth, s), bodyHeight);
    for (let i = 0; i < bodyHeight; i++) {
      lines.push(`${fit(chat[i] ?? "", chatWidth, color)} ${s.dim("│")} ${fit(side[i] ?? "", sideWidth, color)}`);
    }
  } else {
    // Narrow terminal: the plan goes under the chat instead of beside it.
    const planHeight = Math.floor(bodyHeight / 2);
    const chatHeight = bodyHeight - planHeight - 1;
    for (const line of bottom(chatLines(view, cols, s, color), chatHeight)) lines.push(fit(line, cols, color));
    lines.push(fit(s.dim("─".repeat(cols)), cols, color));
    for (const line of top(planLines(view, cols, s), planHeight)) lines.push(fit(line, cols, color));
  }

  const hint = " Enter plan · Ctrl+H offline/hosted · Esc quit ";
  lines.push(fit(s.dim(`──${hint}${"─".repeat(Math.max(0, cols - hint.length - 2))}`), cols, color));
  const prompt = "› ";
  const room = Math.max(1, cols - prompt.length - 1);
  const visible = Bun.stringWidth(view.input) > room ? Bun.sliceAnsi(view.input, -room) : view.input;
  lines.push(fit(`${s.bold(prompt)}${visible}`, cols, color));
  return { lines, cursor: { row: rows, col: prompt.length + Bun.stringWidth(visible) + 1 } };
}
