/**
 * `health login` without credential flags: the device link (RFC 8628, adapted to admin
 * sessions). The CLI asks the server for a code, says where to approve it, and polls until an
 * admin approves or denies it in the console or it expires. It only prints and polls, so it works
 * the same without a terminal (over SSH, in a container, under a test).
 */
import { hostname } from "node:os";
import { CliError } from "../errors.ts";
import { callServer, REQUEST_TIMEOUT_MS, type TrpcClient, trpcClient, trpcFailure } from "./api.ts";
import { colorEnabled, print, styles } from "./output.ts";

type StartAnswer = Awaited<ReturnType<TrpcClient["device"]["start"]["mutate"]>>;
type PollAnswer = Awaited<ReturnType<TrpcClient["device"]["poll"]["mutate"]>>;
/** A poll the server never answered; the wait goes on, since a restart or a blip should not end it. */
export type WaitAnswer = PollAnswer | { status: "unreachable" };
export type Decision = Extract<PollAnswer, { status: "approved" | "denied" | "expired" }>;

/** RFC 8628 §3.5: after `slow_down`, this and every later poll waits 5 seconds longer. */
export const SLOW_DOWN_STEP_MS = 5000;

export interface WaitOptions {
  poll: () => Promise<WaitAnswer>;
  intervalSeconds: number;
  expiresAtMs: number;
  sleep: (ms: number) => Promise<void>;
  now?: () => number;
  /** Told after every poll that did not decide, e.g. to update a progress line. */
  onPending?: (answer: Exclude<WaitAnswer, Decision>, intervalMs: number) => void;
}

/** Polls at the interval (never faster) until the request is decided or has expired. */
export async function waitForDecision(options: WaitOptions): Promise<Decision> {
  const now = options.now ?? Date.now;
  let intervalMs = options.intervalSeconds * 1000;
  for (;;) {
    await options.sleep(intervalMs);
    const answer = await options.poll();
    switch (answer.status) {
      case "approved":
      case "denied":
      case "expired":
        return answer;
      case "slow_down":
        intervalMs += SLOW_DOWN_STEP_MS;
        break;
      case "pending":
      case "unreachable":
        break;
    }
    options.onPending?.(answer, intervalMs);
    // The server says `expired` itself; this only ends the wait if it is unreachable by then.
    if (now() > options.expiresAtMs + intervalMs) return { status: "expired" };
  }
}

/** What the approving admin is shown, so they can tell this terminal's request from another. */
function clientName(): string {
  const host = hostname()
    .replace(/[^\x20-\x7e]/g, "")
    .slice(0, 60);
  return host === "" ? "health CLI" : `health CLI on ${host}`;
}

const clamp = (value: number, min: number, max: number): number =>
  Number.isFinite(value) ? Math.min(max, Math.max(min, value)) : min;

/**
 * The answer is printed to a terminal and paces the polling: whatever a server sends, no escape
 * sequence reaches the screen and the CLI neither hammers it nor waits for hours.
 */
function checkedStart(server: string, started: StartAnswer): StartAnswer {
  const printable = (text: string) => /^[\x21-\x7e]{1,2048}$/.test(text);
  if (
    !/^[A-Z]{4}-[A-Z]{4}$/.test(started.userCode) ||
    !printable(started.verificationUri) ||
    !printable(started.verificationUriComplete)
  ) {
    throw new CliError(`The server at ${server} sent a device sign-in this CLI does not understand`);
  }
  return { ...started, interval: clamp(started.interval, 1, 60), expiresIn: clamp(started.expiresIn, 1, 3600) };
}

async function startRequest(server: string): Promise<StartAnswer> {
  const started = await callServer(
    server,
    () => trpcClient(server).device.start.mutate({ clientName: clientName() }),
    (failure) =>
      failure.code === "NOT_FOUND"
        ? new CliError(`The server at ${server} does not offer device sign-in`, {
            hint: "Use health login --email <e> --password-stdin, or update the server",
          })
        : undefined,
  );
  return checkedStart(server, started);
}

async function pollOnce(server: string, deviceCode: string, cancel: AbortSignal): Promise<WaitAnswer> {
  // Cancelling aborts the request itself: a fetch left in flight would keep the process alive.
  const signal = AbortSignal.any([cancel, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]);
  try {
    return await trpcClient(server).device.poll.mutate({ deviceCode }, { signal });
  } catch (error) {
    if (cancel.aborted) throw cancel.reason;
    const failure = trpcFailure(error);
    if (failure === undefined) throw error;
    if (failure.code === undefined) return { status: "unreachable" };
    throw new CliError(failure.message);
  }
}

function printInstructions(started: StartAnswer): void {
  const s = styles(colorEnabled(process.stdout));
  print("To sign in, approve this request in the health console:");
  print();
  print(`  Open:  ${started.verificationUri}`);
  print(`  Code:  ${s.bold(started.userCode)}`);
  print();
  print(`Or open ${started.verificationUriComplete}`);
  print("and check that it shows the same code.");
  print();
}

/** The waiting line on stderr: redrawn in place on a terminal, a single line otherwise (logs stay short). */
function progressLine(expiresAtMs: number) {
  const stderr = process.stderr;
  const live = stderr.isTTY === true;
  const s = styles(colorEnabled(stderr));
  let note = "";
  function remaining(): string {
    const seconds = Math.max(0, Math.ceil((expiresAtMs - Date.now()) / 1000));
    return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
  }
  function draw(): void {
    stderr.write(`\r\x1b[2K${s.dim(`Waiting for approval… (code expires in ${remaining()}; Ctrl+C cancels)${note}`)}`);
  }
  if (live) draw();
  else stderr.write(`Waiting for approval (the code expires in ${remaining()}; Ctrl+C to cancel)…\n`);
  const timer = live ? setInterval(draw, 1000) : undefined;
  return {
    update(answer: Exclude<WaitAnswer, Decision>): void {
      const next = answer.status === "unreachable" ? " — the server did not answer; still trying" : "";
      if (!live && next !== "" && next !== note) stderr.write(`The server did not answer; still trying…\n`);
      note = next;
      if (live) draw();
    },
    stop(): void {
      clearInterval(timer);
      if (live) stderr.write("\r\x1b[2K");
    },
  };
}

/** Resolves after `ms`, or rejects with the cancellation as soon as `signal` aborts. */
function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    function onAbort(): void {
      clearTimeout(timer);
      reject(signal.reason);
    }
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Runs the whole flow and returns the new session. Ctrl+C stops it cleanly: the progress line is
 * cleared and one line says so (exit 1); the request is left to expire on the server.
 */
export async function loginWithDevice(server: string): Promise<{ sessionToken: string; expiresAt: string }> {
  const started = await startRequest(server);
  printInstructions(started);
  const expiresAtMs = Date.now() + started.expiresIn * 1000;
  const cancel = new AbortController();
  const onInterrupt = () => cancel.abort(new CliError("Cancelled: nobody was signed in"));
  process.once("SIGINT", onInterrupt);
  const progress = progressLine(expiresAtMs);
  let decision: Decision;
  try {
    decision = await waitForDecision({
      poll: () => pollOnce(server, started.deviceCode, cancel.signal),
      intervalSeconds: started.interval,
      expiresAtMs,
      sleep: (ms) => sleepUnlessAborted(ms, cancel.signal),
      onPending: (answer) => progress.update(answer),
    });
  } finally {
    progress.stop();
    process.off("SIGINT", onInterrupt);
  }
  switch (decision.status) {
    case "approved":
      return { sessionToken: decision.sessionToken, expiresAt: decision.expiresAt };
    case "denied":
      throw new CliError("The sign-in request was denied in the console");
    case "expired":
      throw new CliError("The code expired before it was approved", { hint: "Run health login again for a new code" });
  }
}
