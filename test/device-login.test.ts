/**
 * Device-link sign-in (`health login` alone) end to end: the tRPC procedures against a real
 * server, the real CLI process approved through a signed-in client, and the console's approval
 * page in Chromium (screenshots in test/artifacts/console/).
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { TRPCClientError } from "@trpc/client";
import { USER_CODE_ALPHABET } from "../core/device-codes.ts";
import { type Decision, SLOW_DOWN_STEP_MS, type WaitAnswer, waitForDecision } from "../cli/lib/device-login.ts";
import { CLI_BIN, cli, cliEnv, deadServerUrl, json, tempDir, until } from "./fixtures/cli/cli.ts";
import { hasChromium, launchBrowser } from "./support/browser.ts";
import { startTestServer, type TestServer } from "./support/server.ts";
import { ADMIN, adminEnv, signIn, trpcClient } from "./support/trpc.ts";

// Real servers and real CLI processes on 2 cores; each test still finishes in a few seconds.
setDefaultTimeout(20_000);

const USER_CODE = new RegExp(`^[${USER_CODE_ALPHABET}]{4}-[${USER_CODE_ALPHABET}]{4}$`);

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer(adminEnv);
});

afterAll(async () => {
  await server[Symbol.asyncDispose]();
});

/** The tRPC error code of a rejected call, or "resolved" when it did not fail. */
async function failureOf(call: Promise<unknown>): Promise<{ code: string | undefined; message: string }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof TRPCClientError) return { code: error.data?.code, message: error.message };
    throw error;
  }
  return { code: "resolved", message: "" };
}

/** Edits the server's SQLite file directly, for what a test cannot wait for (ten minutes). */
function withDatabase<T>(use: (db: Database) => T): T {
  const db = new Database(server.dbPath);
  try {
    return use(db);
  } finally {
    db.close();
  }
}

const rowOf = (userCode: string) =>
  withDatabase((db) =>
    db
      .query<{ status: string; userId: string | null; approvedAt: number | null }, [string]>(
        "SELECT status, userId, approvedAt FROM device_logins WHERE userCode = ?",
      )
      .get(userCode.replace("-", "")),
  );

describe("device tRPC procedures", () => {
  test("start → pending → approve → approved once with a working session → consumed", async () => {
    const anonymous = trpcClient(server.url);
    const started = await anonymous.device.start.mutate({ clientName: "health CLI on build-01" });
    expect(started).toEqual({
      deviceCode: expect.stringMatching(/^hdc_[0-9A-Za-z]{40}$/),
      userCode: expect.stringMatching(USER_CODE),
      verificationUri: `${server.url}/admin/device`,
      verificationUriComplete: `${server.url}/admin/device?code=${started.userCode}`,
      expiresIn: 600,
      interval: 5,
    });
    expect(await anonymous.device.poll.mutate({ deviceCode: started.deviceCode })).toEqual({ status: "pending" });

    const { client: admin } = await signIn(server.url);
    // Case, dash and spaces do not matter to the person typing the code.
    const typed = ` ${started.userCode.replace("-", " ").toLowerCase()} `;
    const shown = await admin.device.lookup.query({ userCode: typed });
    expect(shown).toEqual({
      userCode: started.userCode,
      clientName: "health CLI on build-01",
      createdAt: expect.any(String),
      expiresAt: expect.any(String),
    });
    expect(Date.parse(shown.expiresAt) - Date.parse(shown.createdAt)).toBe(600_000);

    expect(await admin.device.approve.mutate({ userCode: started.userCode.replace("-", "") })).toMatchObject({
      status: "approved",
      userCode: started.userCode,
    });
    // Decided requests answer at once, even to a poll sooner than the interval.
    const approved = await anonymous.device.poll.mutate({ deviceCode: started.deviceCode });
    if (approved.status !== "approved") throw new Error(`expected approved, got ${approved.status}`);
    expect(approved.sessionToken).toStartWith("hss_");
    expect(await trpcClient(server.url, approved.sessionToken).auth.me.query()).toMatchObject({
      email: ADMIN.email,
      role: "owner",
      org: { id: server.defaultOrg.id },
    });
    // Exactly once: the record is consumed and the code now reads like an unknown one.
    expect(await anonymous.device.poll.mutate({ deviceCode: started.deviceCode })).toEqual({ status: "expired" });
    expect(rowOf(started.userCode)?.status).toBe("consumed");
    expect(await failureOf(admin.device.approve.mutate({ userCode: started.userCode }))).toEqual({
      code: "CONFLICT",
      message: `The code ${started.userCode} was already approved`,
    });

    await server.drain();
    const audit = withDatabase((db) =>
      db.query<{ action: string }, []>("SELECT action FROM admin_audit WHERE action LIKE 'device_login.%'").all(),
    );
    expect(audit).toContainEqual({ action: "device_login.approve" });
  });

  test("deny: the poll says denied, no session is created, and a second decision is a conflict", async () => {
    const anonymous = trpcClient(server.url);
    const started = await anonymous.device.start.mutate({});
    const { client: admin } = await signIn(server.url);
    expect((await admin.device.lookup.query({ userCode: started.userCode })).clientName).toBe("health CLI");
    const sessions = () =>
      withDatabase((db) => db.query<{ n: number }, []>("SELECT count(*) AS n FROM sessions").get()?.n);
    const before = sessions();
    expect(await admin.device.deny.mutate({ userCode: started.userCode })).toMatchObject({ status: "denied" });
    expect(await anonymous.device.poll.mutate({ deviceCode: started.deviceCode })).toEqual({ status: "denied" });
    expect(sessions()).toBe(before);
    expect(rowOf(started.userCode)).toMatchObject({ status: "denied", userId: expect.stringMatching(/^usr_/) });
    expect(await failureOf(admin.device.approve.mutate({ userCode: started.userCode }))).toEqual({
      code: "CONFLICT",
      message: `The code ${started.userCode} was already denied`,
    });
    expect(await failureOf(admin.device.lookup.query({ userCode: started.userCode }))).toMatchObject({
      code: "CONFLICT",
    });
    await server.drain();
    const denials = withDatabase((db) =>
      db.query<{ n: number }, []>("SELECT count(*) AS n FROM admin_audit WHERE action = 'device_login.deny'").get(),
    );
    expect(denials?.n).toBe(1);
  });

  test("an expired request cannot be approved and polls as expired, like an unknown code", async () => {
    const anonymous = trpcClient(server.url);
    const started = await anonymous.device.start.mutate({});
    withDatabase((db) =>
      db.run("UPDATE device_logins SET expiresAt = ? WHERE userCode = ?", [
        Date.now() - 1,
        started.userCode.replace("-", ""),
      ]),
    );
    const { client: admin } = await signIn(server.url);
    expect(await failureOf(admin.device.approve.mutate({ userCode: started.userCode }))).toEqual({
      code: "NOT_FOUND",
      message: `The code ${started.userCode} has expired; run health login again for a new one`,
    });
    expect(await anonymous.device.poll.mutate({ deviceCode: started.deviceCode })).toEqual({ status: "expired" });
    const unknown = `hdc_${"A".repeat(40)}`;
    expect(await anonymous.device.poll.mutate({ deviceCode: unknown })).toEqual({ status: "expired" });
    expect(await anonymous.device.poll.mutate({ deviceCode: "not a device code" })).toEqual({ status: "expired" });
    expect(await failureOf(admin.device.lookup.query({ userCode: "BBBB-BBBB" }))).toEqual({
      code: "NOT_FOUND",
      message:
        "No sign-in request has the code BBBB-BBBB: check it against your terminal, or run health login again if it expired",
    });
    // A mistyped letter (vowels are not in the alphabet) is a code that is not found; digits are not a code at all.
    expect(await failureOf(admin.device.lookup.query({ userCode: "abcd-efgh" }))).toEqual({
      code: "NOT_FOUND",
      message:
        "No sign-in request has the code ABCD-EFGH: check it against your terminal, or run health login again if it expired",
    });
    expect((await failureOf(admin.device.lookup.query({ userCode: "ABCD-1234" }))).code).toBe("BAD_REQUEST");
  });

  test("polling a pending request faster than the interval answers slow_down", async () => {
    const anonymous = trpcClient(server.url);
    const started = await anonymous.device.start.mutate({});
    expect(await anonymous.device.poll.mutate({ deviceCode: started.deviceCode })).toEqual({ status: "pending" });
    expect(await anonymous.device.poll.mutate({ deviceCode: started.deviceCode })).toEqual({ status: "slow_down" });
    // A client that waited the interval is answered normally again.
    withDatabase((db) =>
      db.run("UPDATE device_logins SET lastPolledAt = ? WHERE userCode = ?", [
        Date.now() - started.interval * 1000,
        started.userCode.replace("-", ""),
      ]),
    );
    expect(await anonymous.device.poll.mutate({ deviceCode: started.deviceCode })).toEqual({ status: "pending" });
  });

  test("the device code is never stored in clear, and deciding needs a session", async () => {
    const anonymous = trpcClient(server.url);
    const started = await anonymous.device.start.mutate({});
    server.flush();
    const random = started.deviceCode.slice("hdc_".length);
    for (const path of [server.dbPath, `${server.dbPath}-wal`]) {
      const file = Bun.file(path);
      const text = (await file.exists()) ? Buffer.from(await file.arrayBuffer()).toString("latin1") : "";
      expect({ path, clear: text.includes(random) }).toEqual({ path, clear: false });
    }
    const hash = new Bun.CryptoHasher("sha256").update(started.deviceCode).digest("hex");
    expect(
      withDatabase((db) =>
        db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM device_logins WHERE deviceCodeHash = ?").get(hash),
      )?.n,
    ).toBe(1);

    for (const call of [
      anonymous.device.lookup.query({ userCode: started.userCode }),
      anonymous.device.approve.mutate({ userCode: started.userCode }),
      anonymous.device.deny.mutate({ userCode: started.userCode }),
    ]) {
      expect((await failureOf(call)).code).toBe("UNAUTHORIZED");
    }
  });

  test("starting is rate-limited per client address: 10 a minute", async () => {
    await using fresh = await startTestServer(adminEnv);
    const anonymous = trpcClient(fresh.url);
    for (let i = 0; i < 10; i++) await anonymous.device.start.mutate({});
    expect(await failureOf(anonymous.device.start.mutate({}))).toEqual({
      code: "TOO_MANY_REQUESTS",
      message: "Too many sign-in requests from this address; wait a minute",
    });
  });

  test("a client name with control characters is refused", async () => {
    const failure = await failureOf(trpcClient(server.url).device.start.mutate({ clientName: "evil\u001b[2Jname" }));
    expect(failure.code).toBe("BAD_REQUEST");
  });
});

describe("the CLI's wait loop", () => {
  function scripted(answers: WaitAnswer[]) {
    const sleeps: number[] = [];
    let next = 0;
    return {
      sleeps,
      wait: () =>
        waitForDecision({
          poll: async () => answers[next++] ?? { status: "pending" },
          intervalSeconds: 5,
          expiresAtMs: Number.POSITIVE_INFINITY,
          sleep: async (ms) => {
            sleeps.push(ms);
          },
        }),
    };
  }

  test("waits the interval before every poll and adds 5 s for good after slow_down", async () => {
    const run = scripted([
      { status: "pending" },
      { status: "slow_down" },
      { status: "unreachable" },
      { status: "slow_down" },
      { status: "denied" },
    ]);
    expect(await run.wait()).toEqual<Decision>({ status: "denied" });
    expect(run.sleeps).toEqual([
      5000,
      5000,
      5000 + SLOW_DOWN_STEP_MS,
      5000 + SLOW_DOWN_STEP_MS,
      5000 + 2 * SLOW_DOWN_STEP_MS,
    ]);
  });

  test("gives up once the code is past its expiry even if the server never says so", async () => {
    let now = 0;
    const decision = await waitForDecision({
      poll: async () => ({ status: "unreachable" }),
      intervalSeconds: 5,
      expiresAtMs: 60_000,
      now: () => now,
      sleep: async (ms) => {
        now += ms;
      },
    });
    expect({ decision, now }).toEqual({ decision: { status: "expired" }, now: 70_000 });
  });
});

/** Reads a child's stream into `sink.text` as it arrives. */
async function collect(stream: ReadableStream<Uint8Array>, sink: { text: string }): Promise<void> {
  const decoder = new TextDecoder();
  for await (const chunk of stream) sink.text += decoder.decode(chunk, { stream: true });
}

/** `health login --server <url>` as a real process, its output read while it runs. */
function spawnLogin(url: string, home: string) {
  const child = Bun.spawn([process.execPath, CLI_BIN, "login", "--server", url], {
    cwd: home,
    env: cliEnv(home),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const stdout = { text: "" };
  const stderr = { text: "" };
  const done = Promise.all([collect(child.stdout, stdout), collect(child.stderr, stderr)]);
  return {
    child,
    stdout,
    stderr,
    /** The user code once it has been printed. */
    userCode: () =>
      until("the user code on stdout", () => /Code:\s+([A-Z]{4}-[A-Z]{4})/.exec(stdout.text)?.[1], 10_000),
    async exited(): Promise<number> {
      const code = await child.exited;
      await done;
      return code;
    },
  };
}

describe("health login (device link)", () => {
  // Two terminals wait at once, so the one poll interval (5 s) is paid once for both outcomes.
  test("prints the URL and the code, waits without a terminal; approved stores the session, denied exits 1", async () => {
    using home = tempDir("health-device-cli-");
    using deniedHome = tempDir("health-device-cli-");
    const login = spawnLogin(server.url, home);
    const refused = spawnLogin(server.url, deniedHome);
    const userCode = await login.userCode();
    expect(login.stdout.text).toContain(`${server.url}/admin/device\n`);
    expect(login.stdout.text).toContain(`${server.url}/admin/device?code=${userCode}`);
    await until("the waiting line on stderr", () => login.stderr.text.includes("Waiting for approval"));

    const { client: admin } = await signIn(server.url);
    expect((await admin.device.lookup.query({ userCode })).clientName).toStartWith("health CLI on ");
    await admin.device.approve.mutate({ userCode });
    await admin.device.deny.mutate({ userCode: await refused.userCode() });

    expect({ code: await login.exited(), stderr: login.stderr.text }).toEqual({
      code: 0,
      stderr: expect.stringContaining("Waiting for approval"),
    });
    expect(login.stdout.text).toContain(`Logged in to ${server.url} as ${ADMIN.email}`);
    const whoami = await cli(["whoami", "--json"], { cwd: home, home });
    expect(whoami.code).toBe(0);
    expect(json(whoami)).toMatchObject({ server: server.url, session: { email: ADMIN.email }, token: null });

    expect(await refused.exited()).toBe(1);
    expect(refused.stderr.text).toContain("✖ The sign-in request was denied in the console");
    expect(await Bun.file(`${deniedHome}/credentials.json`).exists()).toBe(false);
  });

  test("Ctrl+C stops the wait cleanly", async () => {
    using home = tempDir("health-device-cli-");
    const login = spawnLogin(server.url, home);
    await login.userCode();
    await until("the waiting line", () => login.stderr.text.includes("Waiting for approval"));
    login.child.kill("SIGINT");
    expect(await login.exited()).toBe(1);
    expect(login.stderr.text).toContain("✖ Cancelled: nobody was signed in");
  });

  test("an unreachable server fails fast with the usual line", async () => {
    using home = tempDir("health-device-cli-");
    const result = await cli(["login", "--server", deadServerUrl()], { cwd: home, home });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Cannot reach the health server");
  });
});

describe.skipIf(!hasChromium)("the console's device page in Chromium", () => {
  test("approves from the deep link after signing in, at phone width, without CSP problems", async () => {
    await using browser = await launchBrowser({ artifacts: "console", viewport: { width: 390, height: 844 } });
    const { page } = browser;
    const anonymous = trpcClient(server.url);
    const started = await anonymous.device.start.mutate({ clientName: "health CLI on laptop-7" });

    await page.goto(started.verificationUriComplete);
    await page.getByRole("heading", { name: "Sign in", level: 1 }).waitFor();
    await page.getByLabel("Email").fill(ADMIN.email);
    await page.getByLabel("Password").fill(ADMIN.password);
    await page.getByRole("button", { name: "Sign in" }).click();

    await page.getByRole("heading", { name: "Device login", level: 1 }).waitFor();
    const request = page.getByRole("region", { name: "Sign-in request" });
    await request.getByText("health CLI on laptop-7").waitFor();
    await request.getByText(started.userCode, { exact: true }).waitFor();
    expect(await page.getByRole("textbox", { name: "Code" }).inputValue()).toBe(started.userCode);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBe(0);
    await browser.screenshot("device-01-confirm-phone");

    await request.getByRole("button", { name: "Approve" }).click();
    const result = page.getByRole("status").filter({ hasText: "Approved" });
    await result.waitFor();
    expect(await result.textContent()).toContain("health CLI on laptop-7");
    await browser.screenshot("device-02-approved-phone");
    expect(await anonymous.device.poll.mutate({ deviceCode: started.deviceCode })).toMatchObject({
      status: "approved",
    });

    // Typing a code by keyboard alone: a denial, then an unknown code with a clear message.
    await page.setViewportSize({ width: 1280, height: 800 });
    const other = await anonymous.device.start.mutate({});
    await page.getByRole("link", { name: "Runs" }).click();
    await page.getByRole("heading", { name: "Runs", level: 1 }).waitFor();
    await page.getByRole("link", { name: "Device login" }).click();
    await page.getByRole("heading", { name: "Device login", level: 1 }).waitFor();
    // A new page moves focus to its title once it has rendered (PageTitle): wait for that, or it
    // can land in the middle of the typing below and swallow keys.
    await page.waitForFunction(() => document.activeElement?.tagName === "H1");
    const field = page.getByRole("textbox", { name: "Code" });
    expect(await field.inputValue()).toBe("");
    await field.focus();
    await page.keyboard.type(other.userCode.toLowerCase().replace("-", ""));
    await page.keyboard.press("Enter");
    await page.getByRole("region", { name: "Sign-in request" }).getByText(other.userCode, { exact: true }).waitFor();
    await page.getByRole("button", { name: "Deny" }).click();
    await page.getByRole("status").filter({ hasText: "Denied" }).waitFor();
    await browser.screenshot("device-03-denied");
    expect(await anonymous.device.poll.mutate({ deviceCode: other.deviceCode })).toEqual({ status: "denied" });

    // A wrong code, with a letter the alphabet never uses, is simply not found (or expired).
    await field.fill("ABCD-EFGH");
    await page.keyboard.press("Enter");
    await page.getByRole("alert").filter({ hasText: "No sign-in request has the code ABCD-EFGH" }).waitFor();
    expect(await page.getByRole("alert").textContent()).toContain("run health login again if it expired");
    await browser.screenshot("device-04-unknown-code");
    expect(browser.problems).toEqual([]);
  });
});
