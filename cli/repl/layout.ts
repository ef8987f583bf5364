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
  /** `output`: what a step run with /run printed, shown as it came. */
  who: "you" | "health" | "notice" | "output";
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
  /** What is running, shown while busy ("planning…", "running step 2…"). */
  activity?: string;
  /** Lines scrolled back from the newest (PageUp/PageDown); 0 follows the conversation. */
  scroll: number;
}

export interface Frame {
  lines: string[];
  /** 1-based position of the cursor on the input line. */
  cursor: { row: number; col: number };
  /** The furthest `scroll` can go back, and how far one PageUp goes, for this size. */
  maxScroll: number;
  page: number;
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
  const [head = "", ...rest] = Bun.wrapAnsi(text, room, { hard: true, trim: true }).split("\n");
  return [`${first}${head}`, ...rest.map((line) => `${" ".repeat(indent)}${line}`)];
}

/**
 * Wraps one line so that its continuation lines line up under its text: under the indentation,
 * and past a list marker ("- ", "2. ") when it has one.
 */
export function wrapIndented(line: string, width: number): string[] {
  const lead = /^\s*(?:(?:[-*•✔✖⚠ℹ]|\d{1,3}[.)])\s+)?/.exec(Bun.stripANSI(line))?.[0] ?? "";
  const indent = Math.min(Bun.stringWidth(lead), Math.floor(width / 2));
  const body = Bun.sliceAnsi(line, indent);
  if (Bun.stringWidth(body) + indent <= width || width <= 1) return [line];
  const [head = "", ...rest] = Bun.wrapAnsi(body, Math.max(1, width - indent), { hard: true, trim: true }).split("\n");
  return [`${Bun.sliceAnsi(line, 0, indent)}${head}`, ...rest.map((continued) => `${" ".repeat(indent)}${continued}`)];
}

/**
 * The top line: mode always, then as much of the rest as fits. Narrow terminals drop the key
 * hints, then the session, then the hosted server's address, rather than cut a word in half.
 */
function statusBar(view: ReplView, cols: number, s: Styles, color: boolean): string {
  const long = view.mode === "hosted" ? `mode: HOSTED → ${view.server ?? "?"}` : "mode: OFFLINE (no network)";
  const short = view.mode === "hosted" ? "HOSTED" : "OFFLINE";
  const badge = (mode: string) =>
    color ? s.bold(view.mode === "hosted" ? s.green(` ● ${mode} `) : s.yellow(` ● ${mode} `)) : ` [${mode}] `;
  const session = ` session ${view.sessionId.slice(0, 8)} · turn ${view.turns} `;
  const turn = ` turn ${view.turns} `;
  const candidates: Array<[string, string, string]> = [
    [long, session, " Ctrl+H offline/hosted · Esc quit "],
    [long, session, " /help "],
    [long, turn, " /help "],
    [long, turn, ""],
    [short, turn, ""],
    [short, "", ""],
  ];
  const widthOf = ([mode, middle, right]: [string, string, string]) =>
    Bun.stringWidth(` health${badge(mode)}${middle}${right}`) + 1;
  const [mode, middle, right] = candidates.find((candidate) => widthOf(candidate) <= cols) ?? [short, "", ""];
  const left = ` health${badge(mode)}`;
  const used = Bun.stringWidth(left) + Bun.stringWidth(middle) + Bun.stringWidth(right);
  const gap = " ".repeat(Math.max(1, cols - used));
  const line = fit(`${left}${middle}${gap}${right}`, cols, false);
  return color ? `\x1b[7m${line}\x1b[0m` : line;
}

function chatLines(view: ReplView, width: number, s: Styles, color: boolean): string[] {
  const lines: string[] = [];
  if (view.chat.length === 0) {
    lines.push(
      ...wrap(s.dim("Describe what you want to build; each turn is classified, redacted and planned."), width),
    );
    lines.push(...wrap(s.dim('For example: "build an SMS intake agent for our clinic". /help lists the rest.'), width));
  }
  for (const entry of view.chat) {
    if (lines.length > 0) lines.push("");
    if (entry.who === "you") {
      lines.push(...hang(`${s.bold(s.cyan("you ›"))} `, entry.text, width, 6));
    } else if (entry.who === "health") {
      lines.push(s.bold("health ›"));
      const body = renderMarkdown(entry.text, { color, columns: Math.max(10, width - 2) });
      for (const line of body.split("\n")) lines.push(...wrapIndented(`  ${line}`, width));
    } else if (entry.who === "output") {
      for (const line of entry.text.replace(/\n$/, "").split("\n")) lines.push(...wrapIndented(`  ${line}`, width));
    } else {
      const mark = entry.tone === "error" ? s.red("✖") : entry.tone === "warn" ? s.yellow("⚠") : s.dim("ℹ");
      lines.push(...hang(`${mark} `, entry.tone === "info" ? s.dim(entry.text) : entry.text, width, 2));
    }
  }
  if (view.busy) lines.push("", s.dim(`health › ${view.activity ?? "planning…"}`));
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
  lines.push(...wrap(s.dim("Run a step here with /run <n>, or in a shell:"), width));
  lines.push(...wrap(s.dim(`health code --exec --session-id ${turn.session_id} --step <n>`), width));
  return lines;
}

/** The last `height` lines, padded at the top: the newest text stays in view. */
function bottom(lines: readonly string[], height: number): string[] {
  const tail = lines.slice(Math.max(0, lines.length - height));
  return [...Array.from({ length: height - tail.length }, () => ""), ...tail];
}

/**
 * The conversation's window: the newest `height` lines, or older ones when scrolled back, with a
 * line on the edge saying what is out of view and which key brings it back.
 */
function chatWindow(
  lines: readonly string[],
  height: number,
  scroll: number,
  s: Styles,
): { window: string[]; maxScroll: number } {
  const maxScroll = Math.max(0, lines.length - height);
  const offset = Math.min(Math.max(0, scroll), maxScroll);
  if (offset === 0) return { window: bottom(lines, height), maxScroll };
  const end = lines.length - offset;
  const window = bottom(lines.slice(0, end), height);
  const newer = `↓ ${offset} newer line${offset === 1 ? "" : "s"} · PgDn`;
  window[window.length - 1] = s.dim(`── ${newer} ──`);
  if (end - height > 0) window[0] = s.dim(`── ↑ ${end - height} older · PgUp ──`);
  return { window, maxScroll };
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

  let scrolled: { window: string[]; maxScroll: number };
  let page: number;
  if (cols >= SIDEBAR_MIN_COLS) {
    const sideWidth = Math.min(60, Math.max(28, Math.floor(cols * 0.4)));
    const chatWidth = cols - sideWidth - 3;
    scrolled = chatWindow(chatLines(view, chatWidth, s, color), bodyHeight, view.scroll, s);
    page = Math.max(1, bodyHeight - 2);
    const side = top(planLines(view, sideWidth, s), bodyHeight);
    for (let i = 0; i < bodyHeight; i++) {
      lines.push(
        `${fit(scrolled.window[i] ?? "", chatWidth, color)} ${s.dim("│")} ${fit(side[i] ?? "", sideWidth, color)}`,
      );
    }
  } else {
    // Narrow terminal: the plan goes under the chat instead of beside it.
    const planHeight = Math.floor(bodyHeight / 2);
    const chatHeight = bodyHeight - planHeight - 1;
    scrolled = chatWindow(chatLines(view, cols, s, color), chatHeight, view.scroll, s);
    page = Math.max(1, chatHeight - 2);
    for (const line of scrolled.window) lines.push(fit(line, cols, color));
    lines.push(fit(s.dim("─".repeat(cols)), cols, color));
    for (const line of top(planLines(view, cols, s), planHeight)) lines.push(fit(line, cols, color));
  }

  const hint = cols >= 70 ? " Enter plan · /run <n> · /help · ↑↓ history · PgUp/PgDn scroll " : " Enter · /help ";
  lines.push(fit(s.dim(`──${hint}${"─".repeat(Math.max(0, cols - hint.length - 2))}`), cols, color));
  const prompt = "› ";
  const room = Math.max(1, cols - prompt.length - 1);
  const visible = Bun.stringWidth(view.input) > room ? Bun.sliceAnsi(view.input, -room) : view.input;
  lines.push(fit(`${s.bold(prompt)}${visible}`, cols, color));
  return {
    lines,
    cursor: { row: rows, col: prompt.length + Bun.stringWidth(visible) + 1 },
    maxScroll: scrolled.maxScroll,
    page,
  };
}
