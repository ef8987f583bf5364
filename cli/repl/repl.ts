/**
 * `health code` with no prompt: the interactive planner. Each turn is classified, redacted and
 * planned (offline, or hosted when toggled with Ctrl+H), saved to the session file, and logged
 * as one audit row without prompt text. `/run <n>` runs a step of the plan in place, through the
 * same gate as `--exec`; `/help` lists the keys. Esc or Ctrl+C quits and restores the terminal.
 */
import { DEFAULT_STEP_TIMEOUT_SECONDS, execStep } from "../code/exec.ts";
import { findHostedLogin } from "../code/hosted.ts";
import {
  appendAudit,
  auditRow,
  auditPath,
  type Mode,
  type SavedSession,
  saveTurn,
  sessionPath,
} from "../code/store.ts";
import { type Manifest, inspect, planHosted, planOffline, redactManifest, type Turn } from "../code/turn.ts";
import { UsageError } from "../errors.ts";
import { log } from "../lib/log.ts";
import { colorEnabled } from "../lib/output.ts";
import { resolveServer } from "../lib/server.ts";
import { manifestForPlanning } from "../lib/workspace.ts";
import { type ChatEntry, renderFrame } from "./layout.ts";
import { type Key, TerminalSession } from "./terminal.ts";

export interface ReplOptions {
  hosted: boolean;
  server: string | undefined;
}

/** Longest input line accepted; a prompt is a sentence or two, not a document. */
const MAX_INPUT_CHARS = 4_000;
/** Chat entries kept for scrolling back; older ones are in the session file. */
const MAX_CHAT_ENTRIES = 200;
/** Lines of a step's output shown in the conversation; the run file keeps all of it. */
const MAX_OUTPUT_LINES = 200;

const HELP = [
  "Type what you want to build and press Enter: the turn is classified, redacted and planned.",
  "/run <n>   run step n of the plan here, through the same gate as health code --exec",
  "/help      this list          /quit   leave (or Esc, Ctrl+C)",
  "↑ ↓        earlier inputs     PgUp PgDn   scroll the conversation",
  "Ctrl+H     offline/hosted     Ctrl+U clear the line    Ctrl+L redraw",
].join("\n");

class Repl {
  mode: Mode = "offline";
  readonly sessionId = crypto.randomUUID();
  readonly chat: ChatEntry[] = [];
  plan: Turn | undefined;
  input = "";
  busy = false;
  activity: string | undefined;
  turns = 0;
  /** Lines scrolled back (PageUp); 0 follows the conversation. */
  scroll = 0;
  private page = 10;
  /** Inputs sent, oldest first, and where Up/Down is in them (undefined: editing a new line). */
  private readonly history: string[] = [];
  private historyAt: number | undefined;
  private draft = "";
  private saved: SavedSession | undefined;
  private inflight: AbortController | undefined;
  /** The step /run is running, stopped if the REPL quits. */
  private stepRun: AbortController | undefined;
  /** Where hosted turns go, looked up when hosted mode is switched on. */
  private hostedServer: string | undefined;
  /** Set once quitting began: a hosted answer arriving after that is dropped, not saved. */
  private finishedAlready = false;
  private finished: () => void = () => {};
  readonly done = new Promise<void>((resolve) => {
    this.finished = resolve;
  });

  constructor(
    private readonly terminal: TerminalSession,
    private readonly options: ReplOptions,
  ) {
    if (options.hosted) this.toggleMode();
  }

  render(): void {
    const server = this.mode === "hosted" ? this.hostedServer : undefined;
    const frame = renderFrame(
      {
        mode: this.mode,
        server,
        sessionId: this.sessionId,
        turns: this.turns,
        chat: this.chat.slice(-MAX_CHAT_ENTRIES),
        plan: this.plan,
        input: this.input,
        busy: this.busy,
        activity: this.activity,
        scroll: this.scroll,
      },
      { cols: this.terminal.cols, rows: this.terminal.rows, color: colorEnabled(process.stdout) },
    );
    this.scroll = Math.min(this.scroll, frame.maxScroll);
    this.page = frame.page;
    this.terminal.draw(frame);
  }

  /** Up: the input before; Down: the one after, and past the newest, the line being typed. */
  recall(step: -1 | 1): void {
    if (this.history.length === 0) return;
    if (this.historyAt === undefined) {
      if (step === 1) return;
      this.draft = this.input;
      this.historyAt = this.history.length - 1;
    } else {
      this.historyAt += step;
    }
    if (this.historyAt < 0) this.historyAt = 0;
    if (this.historyAt >= this.history.length) {
      this.historyAt = undefined;
      this.input = this.draft;
      return;
    }
    this.input = this.history[this.historyAt] ?? "";
  }

  onKeys(keys: readonly Key[]): void {
    for (const key of keys) {
      switch (key.name) {
        case "quit":
          this.quit();
          return;
        case "eof":
          if (this.input === "") {
            this.quit();
            return;
          }
          break;
        case "toggle-mode":
          this.toggleMode();
          break;
        case "submit":
          this.submit();
          break;
        case "backspace":
          this.input = [...this.input].slice(0, -1).join("");
          break;
        case "clear-line":
          this.input = "";
          break;
        case "redraw":
          break;
        case "history-prev":
          this.recall(-1);
          break;
        case "history-next":
          this.recall(1);
          break;
        case "page-up":
          this.scroll += this.page;
          break;
        case "page-down":
          this.scroll = Math.max(0, this.scroll - this.page);
          break;
        case "text":
          this.input = (this.input + key.text).slice(0, MAX_INPUT_CHARS);
          break;
        default: {
          const unreachable: never = key;
          throw new Error(`unhandled key ${JSON.stringify(unreachable)}`);
        }
      }
    }
    this.render();
  }

  /** Hosted needs a stored token for the server; without one the mode stays offline and says why. */
  toggleMode(): void {
    if (this.mode === "hosted") {
      this.mode = "offline";
      this.chat.push({
        who: "notice",
        tone: "info",
        text: "Offline: turns are planned on this machine; nothing is sent.",
      });
      return;
    }
    const login = findHostedLogin(this.options.server);
    if (login === undefined) {
      const server = resolveServer(this.options.server).url;
      this.chat.push({
        who: "notice",
        tone: "warn",
        text: `Hosted mode needs a stored token for ${server}: run health login --token <token>. Staying offline.`,
      });
      return;
    }
    this.mode = "hosted";
    this.hostedServer = login.server;
    this.chat.push({ who: "notice", tone: "info", text: `Hosted: redacted prompts go to ${login.server}.` });
  }

  submit(): void {
    const prompt = this.input.trim();
    if (prompt === "") return;
    if (this.busy) {
      this.chat.push({ who: "notice", tone: "info", text: `Still busy (${this.activity ?? "working"}); wait for it.` });
      return;
    }
    this.input = "";
    this.historyAt = undefined;
    this.scroll = 0;
    // Kept in memory only, as typed, for Up/Down; never written anywhere.
    if (this.history.at(-1) !== prompt) this.history.push(prompt);
    if (prompt.startsWith("/")) {
      this.command(prompt);
      return;
    }
    // The chat shows what is planned and, in hosted mode, sent: the redacted prompt.
    this.chat.push({ who: "you", text: inspect(prompt).redacted });
    this.work(this.mode === "hosted" ? "asking the hosted planner…" : "planning…", () => this.planTurn(prompt));
  }

  private work(activity: string, task: () => Promise<void>): void {
    this.busy = true;
    this.activity = activity;
    void task().finally(() => {
      this.busy = false;
      this.activity = undefined;
      this.render();
    });
  }

  /** The slash commands: /run <n>, /help, /quit. */
  private command(line: string): void {
    const [name = "", ...rest] = line.split(/\s+/);
    if (name === "/quit" || name === "/exit") {
      this.quit();
      return;
    }
    if (name === "/help") {
      this.chat.push({ who: "output", text: HELP });
      return;
    }
    if (name === "/run") {
      const step = rest.length === 1 && /^\d{1,4}$/.test(rest[0] ?? "") ? Number(rest[0]) : Number.NaN;
      if (!Number.isInteger(step) || step < 1) {
        this.chat.push({ who: "notice", tone: "warn", text: "Usage: /run <n>, with n a step number of the plan" });
        return;
      }
      if (this.plan === undefined || this.saved === undefined) {
        this.chat.push({ who: "notice", tone: "warn", text: "No plan yet: describe what to build first." });
        return;
      }
      this.chat.push({ who: "you", text: line });
      this.work(`running step ${step}…`, () => this.runStep(step));
      return;
    }
    this.chat.push({ who: "notice", tone: "warn", text: `Unknown command ${name}: /help lists them.` });
  }

  /** Runs a saved step as health code --exec does (same gate, no shell), its output in the chat. */
  private async runStep(step: number): Promise<void> {
    this.stepRun = new AbortController();
    try {
      const result = await execStep({
        sessionId: this.sessionId,
        step,
        timeoutSeconds: DEFAULT_STEP_TIMEOUT_SECONDS,
        stream: false,
        signal: this.stepRun.signal,
      });
      if (this.finishedAlready) return;
      const { record } = result;
      const output = `${record.stdout}${record.stderr}`.replace(/\x1b\[[0-9;]*m/g, "").trimEnd();
      const lines = output === "" ? [] : output.split("\n");
      const shown =
        lines.length > MAX_OUTPUT_LINES
          ? [`… ${lines.length - MAX_OUTPUT_LINES} earlier lines in ${result.path}`, ...lines.slice(-MAX_OUTPUT_LINES)]
          : lines;
      if (shown.length > 0) this.chat.push({ who: "output", text: shown.join("\n") });
      if (record.blocked_reason !== null) {
        this.chat.push({
          who: "notice",
          tone: "error",
          text: `Step ${step} is blocked and was not run: ${record.blocked_reason}`,
        });
      } else if (record.timed_out) {
        this.chat.push({
          who: "notice",
          tone: "error",
          text: `Step ${step} was stopped after ${DEFAULT_STEP_TIMEOUT_SECONDS} s.`,
        });
      } else {
        this.chat.push({
          who: "notice",
          tone: result.exitCode === 0 ? "info" : "error",
          text: `Step ${step} exited with code ${record.exit_code}. Run record: ${result.path}`,
        });
      }
    } catch (error) {
      if (this.finishedAlready) return;
      this.chat.push({ who: "notice", tone: "error", text: error instanceof Error ? error.message : String(error) });
    } finally {
      this.stepRun = undefined;
    }
  }

  private async planTurn(prompt: string): Promise<void> {
    const planning = manifestForPlanning();
    if (planning.warning !== undefined) this.chat.push({ who: "notice", tone: "warn", text: planning.warning });
    const manifest: Manifest = redactManifest(planning.manifest);
    let turn: Turn;
    const login = this.mode === "hosted" ? findHostedLogin(this.options.server) : undefined;
    if (login !== undefined) {
      this.inflight = new AbortController();
      const hosted = await planHosted(prompt, {
        sessionId: this.sessionId,
        manifest,
        login,
        signal: this.inflight.signal,
      });
      this.inflight = undefined;
      turn = hosted.turn;
      if (hosted.failure !== undefined) {
        this.chat.push({
          who: "notice",
          tone: hosted.failure.kind === "refused" ? "error" : "warn",
          text: `${hosted.failure.message}. Showing the offline plan.`,
        });
      }
    } else {
      turn = planOffline(prompt, { sessionId: this.sessionId, manifest });
    }
    if (this.finishedAlready) return;
    this.turns++;
    this.plan = turn;
    this.chat.push({ who: "health", text: turn.assistant_message });
    try {
      this.saved = saveTurn(turn, this.saved);
      appendAudit(auditRow(turn));
    } catch (error) {
      this.chat.push({
        who: "notice",
        tone: "error",
        text: `Could not save the turn: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
  }

  quit(): void {
    if (this.finishedAlready) return;
    this.finishedAlready = true;
    this.inflight?.abort();
    this.stepRun?.abort();
    this.finished();
  }
}

export async function runRepl(options: ReplOptions): Promise<void> {
  if (process.stdin.isTTY !== true || process.stdout.isTTY !== true) {
    throw new UsageError(
      "health code without --prompt is the interactive planner, and needs a terminal (stdin and stdout)",
      'In scripts, use health code --prompt "<text>" [--hosted] [--json]',
    );
  }
  const terminal = new TerminalSession(process.stdin, process.stdout);
  const repl = new Repl(terminal, options);
  const stop = () => repl.quit();
  process.once("SIGTERM", stop);
  process.once("SIGHUP", stop);
  try {
    terminal.enter(
      (keys) => repl.onKeys(keys),
      () => repl.render(),
      stop,
    );
    repl.render();
    await repl.done;
  } finally {
    terminal.leave();
    process.off("SIGTERM", stop);
    process.off("SIGHUP", stop);
  }
  if (repl.turns > 0) {
    log.info(
      `Session saved to ${sessionPath(repl.sessionId)} (${repl.turns} turn${repl.turns === 1 ? "" : "s"}); audit rows in ${auditPath()}`,
    );
  }
}
