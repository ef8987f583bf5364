/**
 * The admin console end to end: a real server, Debian's Chromium, and the screens an admin
 * works through in order (sign in, tokens, loops, runs). The tests share one signed-in page and
 * run in file order, like a person would. Screenshots land in test/artifacts/console/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { ADMIN_CSP } from "../server/routes/console.ts";
import { hasChromium, launchBrowser, type TestBrowser } from "./support/browser.ts";
import { planningBody, postPlan } from "./support/planning.ts";
import { mintToken, startTestServer, type TestServer, tempDir } from "./support/server.ts";
import { ADMIN, adminEnv, signIn } from "./support/trpc.ts";

const FIXTURES = join(import.meta.dir, "fixtures", "loops");

let server: TestServer;
// The test loops, in a folder of their own with one module that does not compile.
const loopsDir = tempDir("health-console-loops-");

beforeAll(async () => {
  cpSync(FIXTURES, `${loopsDir}`, { recursive: true });
  writeFileSync(
    join(`${loopsDir}`, "typo.ts"),
    'import { Workflow } from "health/loop";\nexport default class Typo extends Workflow {\n  async run() { return 1 +; }\n}\n',
  );
  server = await startTestServer({ ...adminEnv, HEALTH_LOOPS_DIR: `${loopsDir}` });
});

afterAll(async () => {
  await server[Symbol.asyncDispose]();
  loopsDir[Symbol.dispose]();
});

function trigger(token: string, loopId: string, body?: unknown): Promise<Response> {
  return fetch(`${server.url}/loop/${server.defaultOrg.id}/${loopId}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

const mainNav = (page: Page) => page.getByRole("navigation", { name: "Main" });

const SECURITY_HEADERS = [
  "content-security-policy",
  "x-content-type-options",
  "referrer-policy",
  "x-frame-options",
] as const;

function securityHeadersOf(response: Response): Record<string, string | null> {
  return Object.fromEntries(SECURITY_HEADERS.map((name) => [name, response.headers.get(name)]));
}

describe("serving /admin", () => {
  test("the index and its assets carry a strict CSP and security headers, with no inline script or style", async () => {
    const index = await fetch(`${server.url}/admin`);
    const html = await index.text();
    const expected = {
      "content-security-policy": ADMIN_CSP,
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
      "x-frame-options": "DENY",
    };
    expect({ status: index.status, type: index.headers.get("content-type"), ...securityHeadersOf(index) }).toEqual({
      status: 200,
      type: "text/html;charset=utf-8",
      ...expected,
    });
    expect(ADMIN_CSP).toContain("script-src 'self';");
    expect(ADMIN_CSP).not.toContain("unsafe-inline");
    expect(ADMIN_CSP).toContain("frame-ancestors 'none'");
    // Every script is an external file and no element carries a style attribute.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=/);

    const assets = [...html.matchAll(/(?:src|href)="(\/admin\/assets\/[^"]+)"/g)].map((match) => match[1] ?? "");
    expect(assets.some((path) => path.endsWith(".js"))).toBe(true);
    expect(assets.some((path) => path.endsWith(".css"))).toBe(true);
    for (const path of assets) {
      const asset = await fetch(`${server.url}${path}`);
      expect({ path, status: asset.status, ...securityHeadersOf(asset) }).toEqual({ path, status: 200, ...expected });
      expect(asset.headers.get("cache-control")).toContain("immutable");
      // The console has no reason to touch web storage: nothing secret can end up there.
      if (path.endsWith(".js")) expect(await asset.text()).not.toMatch(/localStorage|sessionStorage/);
    }
  });

  test("deep links serve the index; unknown assets are 404 problems", async () => {
    const index = await (await fetch(`${server.url}/admin`)).text();
    for (const path of ["/admin/", "/admin/runs/run_abc123", "/admin/settings/tokens", "/admin/loops/loop_echo"]) {
      const response = await fetch(`${server.url}${path}`);
      expect({ path, status: response.status, body: await response.text() }).toEqual({
        path,
        status: 200,
        body: index,
      });
    }
    const missing = await fetch(`${server.url}/admin/assets/nope.js`);
    expect({
      status: missing.status,
      type: missing.headers.get("content-type"),
      csp: missing.headers.get("content-security-policy"),
    }).toEqual({ status: 404, type: "application/problem+json", csp: ADMIN_CSP });
  });
});

describe.skipIf(!hasChromium)("the console in Chromium", () => {
  let browser: TestBrowser;
  // Carried from test to test, as an admin would carry them from screen to screen.
  let token = "";
  let tokenRunId = "";
  let uiRunId = "";

  beforeAll(async () => {
    browser = await launchBrowser({ artifacts: "console" });
  });

  afterAll(async () => {
    await browser?.[Symbol.asyncDispose]();
  });

  test("signs in from a deep link and lands on the requested screen, with an httpOnly SameSite=Strict cookie", async () => {
    const { page, context } = browser;
    await page.goto(`${server.url}/admin/settings/tokens`);
    await page.getByRole("heading", { name: "Sign in", level: 1 }).waitFor();
    await browser.screenshot("01-sign-in");

    await page.getByLabel("Email").fill(ADMIN.email);
    await page.getByLabel("Password").fill("not the password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").filter({ hasText: "Wrong email or password" }).waitFor();

    await page.getByLabel("Password").fill(ADMIN.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "API tokens", level: 1 }).waitFor();

    const session = (await context.cookies(server.url)).find((cookie) => cookie.name === "health_session");
    expect({ httpOnly: session?.httpOnly, sameSite: session?.sameSite }).toEqual({
      httpOnly: true,
      sameSite: "Strict",
    });
    expect(await page.evaluate(() => document.cookie)).not.toContain("health_session");
  });

  test("mints a token and shows it exactly once, with a copy button and a warning", async () => {
    const { page } = browser;
    await page.getByLabel("Name").fill("ci-pipeline");
    await page.getByRole("button", { name: "Create token" }).click();
    await page.getByRole("heading", { name: "Copy your new token now" }).waitFor();
    await page.getByText("This is the only time the full token is shown.").waitFor();

    token = await page.getByLabel("Token “ci-pipeline”").inputValue();
    expect(token).toMatch(/^hlth_[A-Za-z0-9]+$/);
    await page.getByRole("button", { name: "Copy token" }).click();
    await page.getByText("Copied", { exact: true }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(token);
    await browser.screenshot("02-token-created");

    // Never in the URL or web storage, even while it is on screen.
    const storage = await page.evaluate(() => JSON.stringify([{ ...localStorage }, { ...sessionStorage }]));
    expect(storage).not.toContain(token);
    expect(page.url()).not.toContain(token);

    const triggered = await trigger(token, "loop_echo", { from: "ci" });
    expect(triggered.status).toBe(202);
    tokenRunId = ((await triggered.json()) as { runId: string }).runId;

    await page.getByRole("button", { name: "I have copied it" }).click();
    await page.getByRole("heading", { name: "Copy your new token now" }).waitFor({ state: "detached" });
    const row = page.locator("tr").filter({ hasText: "ci-pipeline" });
    await row.getByText(`${token.slice(0, 8)}…${token.slice(-4)}`).waitFor();
    expect(await row.textContent()).toContain("All loops");
    expect(await page.content()).not.toContain(token);
    await page.reload();
    await page.getByRole("heading", { name: "API tokens", level: 1 }).waitFor();
    await row.waitFor();
    expect(await page.content()).not.toContain(token);
  });

  test("mints a token for one loop chosen from the dropdown", async () => {
    const { page } = browser;
    await page.getByLabel("Name").fill("echo-only");
    await page.getByLabel("One loop").check();
    await page.getByLabel("Loop", { exact: true }).selectOption("loop_echo");
    await page.getByRole("button", { name: "Create token" }).click();
    const scoped = await page.getByLabel("Token “echo-only”").inputValue();
    await page.getByRole("button", { name: "I have copied it" }).click();
    const row = page.locator("tr").filter({ hasText: "echo-only" });
    await row.getByText("Loop loop_echo").waitFor();

    expect((await trigger(scoped, "loop_slow", { ms: 1 })).status).toBe(403);
  });

  test("mints a CLI planning token (cli:run), and refuses a token that may do nothing", async () => {
    const { page } = browser;
    await page.getByLabel("Name").fill("planner");
    await page.getByLabel("No loops").check();
    await page.getByRole("button", { name: "Create token" }).click();
    await page.getByRole("alert").filter({ hasText: "Choose what the token may do" }).waitFor();

    await page.getByLabel("CLI planning").check();
    await page.getByRole("button", { name: "Create token" }).click();
    await page.getByLabel("Token “planner”").waitFor();
    await page.getByRole("button", { name: "I have copied it" }).click();
    const row = page.locator("tr").filter({ hasText: "planner" });
    await row.getByText("CLI planning", { exact: true }).waitFor();
    const { client } = await signIn(server.url);
    const planner = (await client.tokens.list.query()).find((t) => t.name === "planner");
    expect(planner?.scopes).toEqual(["cli:run"]);
    // The masked token stays on one line, however long its prefix.
    const masked = row.locator("td[data-label='Token'] .mono");
    expect(await masked.evaluate((element) => element.getClientRects().length)).toBe(1);
    await browser.screenshot("03-tokens-list");
  });

  test("revokes from the trash action after a confirmation: struck through, kept, and refused by the trigger", async () => {
    const { page } = browser;
    // Escape cancels: nothing is revoked.
    await page.getByRole("button", { name: "Revoke token echo-only" }).click();
    await page.getByRole("dialog", { name: "Revoke “echo-only”?" }).waitFor();
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Cancel");
    await page.keyboard.press("Escape");
    await page.getByRole("dialog").waitFor({ state: "detached" });
    expect(await page.locator("tr.revoked").count()).toBe(0);

    await page.getByRole("button", { name: "Revoke token ci-pipeline" }).click();
    const dialog = page.getByRole("dialog", { name: "Revoke “ci-pipeline”?" });
    await dialog.waitFor();
    await browser.screenshot("04-revoke-confirm", { viewportOnly: true });
    await dialog.getByRole("button", { name: "Revoke token" }).click();

    const row = page.locator("tr.revoked").filter({ hasText: "ci-pipeline" });
    await row.waitFor();
    expect(await row.locator(".token-name").evaluate((element) => getComputedStyle(element).textDecorationLine)).toBe(
      "line-through",
    );
    expect(await row.textContent()).toContain("Revoked");
    expect(await row.getByRole("button").count()).toBe(0);
    // The trash button is gone with the revocation, so focus moves to the list rather than the page.
    await page.waitForFunction(() => document.activeElement?.id === "token-list-title");
    await browser.screenshot("05-token-revoked");

    const refused = await trigger(token, "loop_echo", { from: "ci" });
    expect(refused.status).toBe(401);
  });

  test("shows each loop's overview with its trigger URL and a ready-to-copy curl", async () => {
    const { page } = browser;
    await mainNav(page).getByRole("link", { name: "Loops" }).click();
    await page.getByRole("heading", { name: "Loops", level: 1 }).waitFor();
    await page.getByRole("link", { name: "EchoLoop" }).waitFor();
    await browser.screenshot("06-loops");

    await page.getByRole("link", { name: "EchoLoop" }).click();
    await page.getByRole("heading", { name: "EchoLoop", level: 1 }).waitFor();
    const triggerUrl = `${server.url}/loop/${server.defaultOrg.id}/loop_echo`;
    expect(await page.getByLabel("Trigger URL", { exact: true }).inputValue()).toBe(triggerUrl);
    const curl = await page.locator('pre[data-json="curl"]').textContent();
    expect(curl).toContain(`curl -X POST '${triggerUrl}'`);
    expect(curl).toContain("Authorization: Bearer $HEALTH_TOKEN");
    await page.getByRole("button", { name: "Copy curl command" }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(curl ?? "");
    await browser.screenshot("07-loop-overview");
  });

  test("refuses an invalid JSON body in the Run dialog, as it is typed", async () => {
    const { page } = browser;
    const { client } = await signIn(server.url);
    const before = (await client.runs.list.query({ loopId: "loop_echo" })).runs.length;

    await page.getByRole("button", { name: "Run…" }).click();
    const dialog = page.getByRole("dialog", { name: "Run EchoLoop" });
    await dialog.waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("run-body");
    const body = dialog.getByLabel("JSON body");
    await body.pressSequentially('{"patients": ');
    await dialog.getByText("Not valid JSON").waitFor();
    expect(await body.getAttribute("aria-invalid")).toBe("true");
    expect(await dialog.getByRole("button", { name: "Start run" }).isDisabled()).toBe(true);
    await browser.screenshot("08-run-dialog-invalid", { viewportOnly: true });

    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "detached" });
    expect((await client.runs.list.query({ loopId: "loop_echo" })).runs.length).toBe(before);
  });

  test("starts a run with a JSON body, tagged with the user, and watches it complete on the detail page", async () => {
    const { page } = browser;
    await page.getByRole("button", { name: "Run…" }).click();
    const dialog = page.getByRole("dialog", { name: "Run EchoLoop" });
    await dialog.getByLabel("JSON body").fill('{"hello": "world", "n": 3}');
    await dialog.getByText("Valid JSON.").waitFor();
    await browser.screenshot("09-run-dialog-valid", { viewportOnly: true });
    await dialog.getByRole("button", { name: "Start run" }).click();

    await page.locator("#run-status .status-complete").waitFor();
    uiRunId = new URL(page.url()).pathname.split("/").at(-1) ?? "";
    expect(uiRunId).toMatch(/^run_[A-Za-z0-9]+$/);
    expect(JSON.parse((await page.locator('pre[data-json="input"]').textContent()) ?? "")).toEqual({
      hello: "world",
      n: 3,
    });
    const steps = page.locator("li.step");
    expect(await steps.count()).toBe(4);
    expect(await steps.locator(".status-complete").count()).toBe(4);
    expect(await steps.locator("h3").allTextContents()).toEqual(["look do", "count do", "count do", "nothing do"]);
    expect(await steps.first().textContent()).toContain("Attempts1");
    expect(JSON.parse((await page.locator('pre[data-json="output"]').textContent()) ?? "")).toEqual({
      seen: { isUndefined: false, body: { hello: "world", n: 3 } },
      counts: [1, 2],
      nothing: "undefined",
    });
    expect(await page.locator(".run-summary").textContent()).toContain(ADMIN.email);
    // A waterfall bar per step, and copy buttons for the id, the input and the output.
    expect(await page.locator(".timeline li[data-bar]").count()).toBe(4);
    await page.getByRole("button", { name: "Copy run id" }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(uiRunId);
    await page.getByRole("button", { name: "Copy input" }).click();
    expect(JSON.parse(await page.evaluate(() => navigator.clipboard.readText()))).toEqual({ hello: "world", n: 3 });
    await page.getByRole("button", { name: "Copy output" }).click();
    expect(JSON.parse(await page.evaluate(() => navigator.clipboard.readText()))).toMatchObject({ counts: [1, 2] });
    await browser.screenshot("10-run-complete");
  });

  test("keeps every failed try of a retried step, and draws the steps as a waterfall", async () => {
    const { page } = browser;
    const { client } = await signIn(server.url);
    const { runId } = await client.runs.start.mutate({ loopId: "loop_flaky", body: { failures: 2 } });
    await page.goto(`${server.url}/admin/runs/${runId}`);
    await page.locator("#run-status .status-complete").waitFor();
    const tries = page.locator('details[data-tries="call"]');
    expect(await tries.locator("summary").textContent()).toBe("2 failed tries before this outcome");
    await tries.locator("summary").click();
    expect(await tries.locator("li pre").allTextContents()).toEqual([
      "Error: the gateway answered 503 (try 1)",
      "Error: the gateway answered 503 (try 2)",
    ]);
    await browser.screenshot("10b-run-retried");
  });

  test("a run terminated in its sleep shows the sleep as terminated, not errored", async () => {
    const { page } = browser;
    const { client } = await signIn(server.url);
    const { runId } = await client.runs.start.mutate({
      loopId: "loop_sleeper",
      body: { logFile: join(`${loopsDir}`, "sleeper.log"), sleepMs: 60_000 },
    });
    await page.goto(`${server.url}/admin/runs/${runId}`);
    await page.locator("#run-status .status-sleeping").waitFor();
    await page.getByRole("button", { name: "Terminate…" }).click();
    await page.getByRole("button", { name: "Terminate run" }).click();
    await page.locator("#run-status .status-terminated").waitFor();
    const nap = page.locator('li.step[data-step="nap"]');
    await nap.locator(".status-terminated").waitFor();
    expect(await nap.locator(".status-errored").count()).toBe(0);
    expect(await page.locator('.timeline li[data-bar="nap"] .status-terminated').count()).toBe(1);
    await browser.screenshot("10c-run-terminated-sleep");
  });

  test("updates a run in progress live, without a reload", async () => {
    const { page } = browser;
    await page.goto(`${server.url}/admin/loops/loop_slow`);
    await page.getByRole("button", { name: "Run…" }).click();
    await page.getByRole("dialog").getByLabel("JSON body").fill('{"ms": 1500}');
    await page.getByRole("dialog").getByRole("button", { name: "Start run" }).click();

    await page.getByText("Updating live").waitFor();
    await page.evaluate(() => Reflect.set(window, "sameDocument", true));
    await browser.screenshot("11-run-in-progress");
    await page.locator("#run-status .status-complete").waitFor();
    await page.getByText("Updating live").waitFor({ state: "detached" });
    expect(await page.evaluate(() => Reflect.get(window, "sameDocument"))).toBe(true);
    expect(await page.locator('pre[data-json="output"]').textContent()).toBe('"done"');
  });

  test("shows an errored step with its error", async () => {
    const { page } = browser;
    const { client } = await signIn(server.url);
    const { runId } = await client.runs.start.mutate({ loopId: "loop_throws" });
    await page.goto(`${server.url}/admin/runs/${runId}`);
    await page.locator("#run-status .status-errored").waitFor();
    await page.getByText("No body was sent: event.body is undefined.").waitFor();
    await page.locator("li.step[data-step] .status-errored").waitFor();
    expect(await page.locator('pre[data-json="error:explode"]').textContent()).toContain("the step exploded");
    await browser.screenshot("12-run-errored");
  });

  test("lists runs with status, loop, start, duration and the user or token that started them", async () => {
    const { page } = browser;
    await mainNav(page).getByRole("link", { name: "Runs" }).click();
    await page.getByRole("heading", { name: "Runs", level: 1 }).waitFor();

    const byToken = page.locator(`tr[data-run-id="${tokenRunId}"]`);
    const byUser = page.locator(`tr[data-run-id="${uiRunId}"]`);
    await byToken.waitFor();
    const cells = async (row: typeof byToken) => (await row.locator("td").allTextContents()).map((text) => text.trim());
    const [tokenCells, userCells] = [await cells(byToken), await cells(byUser)];
    expect({ id: tokenCells[0], status: tokenCells[1], loop: tokenCells[2], by: tokenCells[5] }).toEqual({
      id: tokenRunId,
      status: "complete",
      loop: "loop_echo",
      by: "token ci-pipeline",
    });
    expect({ id: userCells[0], status: userCells[1], loop: userCells[2], by: userCells[5] }).toEqual({
      id: uiRunId,
      status: "complete",
      loop: "loop_echo",
      by: `user ${ADMIN.email}`,
    });
    expect(userCells[3]).not.toBe("—");
    expect(userCells[4]).toMatch(/^\d+(\.\d)? m?s$/);
    await browser.screenshot("13-runs");

    await byUser.getByRole("link", { name: uiRunId }).click();
    await page.getByRole("heading", { name: `Run ${uiRunId}`, level: 1 }).waitFor();
  });

  test("each loop card shows its last run and its last 24 hours; skipped modules say where to fix them", async () => {
    const { page } = browser;
    await mainNav(page).getByRole("link", { name: "Loops" }).click();
    const card = (name: string) => page.locator("li.loop-card", { has: page.getByRole("link", { name }) });
    const stats = (name: string, which: "last-run" | "last-day") =>
      card(name).locator(`[data-stats="${which}"]`).textContent();
    await card("EchoLoop").waitFor();
    expect(await stats("EchoLoop", "last-run")).toMatch(/^Last run complete (just now|\d+ s ago)$/);
    expect(await stats("EchoLoop", "last-day")).toBe("Last 24 h: 2 runs, 2 complete, 0 errored");
    expect(await card("EchoLoop").locator("time").getAttribute("title")).toMatch(/\d{4}.*\d:\d\d:\d\d/);
    expect(await stats("LoggerLoop", "last-run")).toBe("Never run");
    expect(await stats("LoggerLoop", "last-day")).toBe("Last 24 h: 0 runs");
    const skipped = page.getByRole("list", { name: "Skipped modules" });
    expect(await page.getByRole("heading", { name: "1 module skipped" }).count()).toBe(1);
    expect(await skipped.locator("li > p").allTextContents()).toEqual([
      `${join(`${loopsDir}`, "typo.ts")}:3:27`,
      "the module failed to load: Unexpected ;",
    ]);
    await browser.screenshot("13b-loops-stats-skipped");

    // The errored count links to the runs it counts; the filters live in the URL and survive a reload.
    await card("ThrowsLoop").getByRole("link", { name: "1 errored" }).click();
    await page.getByRole("heading", { name: "Runs", level: 1 }).waitFor();
    expect(new URL(page.url()).search).toBe("?status=errored&loop=loop_throws");
    await page.locator("tr[data-run-id]").first().waitFor();
    const statuses = async () => (await page.locator("tr[data-run-id] .badge").allTextContents()).sort();
    expect(await statuses()).toEqual(["errored"]);
    await page.reload();
    await page.locator("tr[data-run-id]").first().waitFor();
    expect(await page.getByLabel("Status").inputValue()).toBe("errored");
    expect(await page.getByLabel("Loop").inputValue()).toBe("loop_throws");
    await page.getByLabel("Status").selectOption("sleeping");
    await page.getByText("No runs match these filters.").waitFor();
    expect(new URL(page.url()).search).toBe("?status=sleeping&loop=loop_throws");
    await browser.screenshot("13c-runs-filtered-empty");
  });

  test("shows usage: figures, uPlot charts under the CSP, and links to the runs behind them", async () => {
    const { page } = browser;
    const planner = mintToken(server, ["cli:run"]).token;
    for (const prompt of ["build an intake agent", "build an intake agent", "should I stop my statin?"]) {
      expect((await postPlan(server.url, planner, planningBody({ redacted_prompt: prompt }))).status).toBe(200);
    }
    await mainNav(page).getByRole("link", { name: "Usage" }).click();
    await page.getByRole("heading", { name: "Usage", level: 1 }).waitFor();
    await page.getByText("Last hour").click();
    await page.waitForURL(/\/admin\/usage\?window=1h$/);
    const figure = (label: string) => page.locator("dl.figures .figure").filter({ hasText: label }).locator("dd");
    // The rollups are flushed every 50 ms in tests; the page polls every 10 s, a reload is quicker.
    const deadline = Date.now() + 10_000;
    let requests: string | undefined;
    while (requests !== "3" && Date.now() < deadline) {
      await page.reload();
      requests = (await figure("Requests").textContent())?.trim();
    }
    expect(requests).toBe("3");
    expect((await figure("Clinical blocks").textContent())?.trim()).toBe("1");
    expect((await figure("Cache hit rate").textContent())?.trim()).toBe("50% (1)");
    // Two charts, each a canvas drawn by uPlot, with a legend naming its series.
    await page.locator("figure.chart").nth(1).locator("canvas").first().waitFor();
    expect(await page.locator("figure.chart").count()).toBe(2);
    await page.locator("figure.chart").first().getByText("Clinical blocks").waitFor();
    const failing = page.locator("table.failing-loops");
    await failing.getByRole("link", { name: "loop_throws" }).waitFor();
    await browser.screenshot("18-usage");

    // The errored count opens the runs behind it.
    await failing.locator("tr").filter({ hasText: "loop_throws" }).getByRole("link").nth(1).click();
    await page.getByRole("heading", { name: "Runs", level: 1 }).waitFor();
    expect(new URL(page.url()).search).toBe("?loop=loop_throws&status=errored");
  });

  test("works at phone width without sideways scrolling", async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 390, height: 844 });
    const screens = [
      ["/admin/runs", "Runs", "14-phone-runs"],
      [`/admin/runs/${uiRunId}`, `Run ${uiRunId}`, "15-phone-run"],
      ["/admin/settings/tokens", "API tokens", "16-phone-tokens"],
      ["/admin/loops/loop_echo", "EchoLoop", "17-phone-loop"],
      ["/admin/usage", "Usage", "19-phone-usage"],
    ] as const;
    for (const [path, heading, shot] of screens) {
      await page.goto(`${server.url}${path}`);
      await page.getByRole("heading", { name: heading, level: 1 }).waitFor();
      await page.waitForFunction(() => !document.body.textContent?.includes("Loading"));
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect({ path, overflow }).toEqual({ path, overflow: 0 });
      await browser.screenshot(shot);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  test("signs out, and the page never broke its CSP", async () => {
    const { page, context } = browser;
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in", level: 1 }).waitFor();
    expect((await context.cookies(server.url)).some((cookie) => cookie.name === "health_session")).toBe(false);
    expect(browser.problems).toEqual([]);
  });

  test("creates the first admin with the one-time setup code the server printed", async () => {
    await using fresh = await startTestServer({ HEALTH_LOOPS_DIR: FIXTURES });
    const { page } = browser;
    await page.goto(`${fresh.url}/admin`);
    await page.getByRole("heading", { name: "Create the first admin", level: 1 }).waitFor();
    await page.getByLabel("Setup code").fill(fresh.setupCode ?? "");
    await page.getByLabel("Email").fill("owner@example.com");
    await page.getByLabel("Password").fill("a long enough passphrase");
    await browser.screenshot("18-first-admin-setup");
    await page.getByRole("button", { name: "Create admin and sign in" }).click();
    await page.getByRole("heading", { name: "Loops", level: 1 }).waitFor();
    await page.getByText("owner@example.com").waitFor();
    expect(browser.problems).toEqual([]);
  });
});
