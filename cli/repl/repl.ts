/**
 * `health code` with no prompt: the interactive planner. Each turn is classified, redacted and
 * planned (offline, or hosted when toggled with Ctrl+H), saved to the session file, and logged
 * as one audit row without prompt text. Esc or Ctrl+C quits and restores the terminal.
 */
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

class Repl {
  mode: Mode = "offline";
  readonly sessionId = crypto.randomUUID();
  readonly chat: ChatEntry[] = [];
  plan: Turn | undefined;
  input = "";
  busy = false;
  turns = 0;
  private saved: SavedSession | undefined;
  private inflight: AbortController | undefined;
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
        chat: this.chat.slice(-50),
        plan: this.plan,
        input: this.input,
        busy: this.busy,
      },
      { cols: this.terminal.cols, rows: this.terminal.rows, color: colorEnabled(process.stdout) },
    );
    this.terminal.draw(frame);
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
      this.chat.push({ who: "notice", tone: "info", text: "Still planning the last turn; wait for it." });
      return;
    }
    if (prompt === "/quit" || prompt === "/exit") {
      this.quit();
      return;
    }
    this.input = "";
    // The chat shows what is planned and, in hosted mode, sent: the redacted prompt.
    this.chat.push({ who: "you", text: inspect(prompt).redacted });
    this.busy = true;
    void this.planTurn(prompt).finally(() => {
      this.busy = false;
      this.render();
    });
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
