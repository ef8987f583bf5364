/** health login / setup / whoami / logout / tokens against a real server. */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TRPCClientError } from "@trpc/client";
import { startTestServer } from "./support/server.ts";
import { ADMIN, adminEnv, trpcClient } from "./support/trpc.ts";
import { CLI_BIN, type CliResult, cli, cliEnv, json, tempDir, until } from "./fixtures/cli/cli.ts";
import type { TokenView } from "../server/services/tokens.ts";

// Every test here runs the CLI as real processes, some against a real server: 5 s is tight on 2 cores.
setDefaultTimeout(20_000);

function mode(path: string): number {
  return statSync(path).mode & 0o777;
}

function storedCredentials(home: string): {
  server: string;
  session?: { secret: string; expiresAt: string };
  token?: { secret: string };
} {
  return JSON.parse(readFileSync(join(home, "credentials.json"), "utf8"));
}

async function loginAdmin(server: string, dir: string): Promise<CliResult> {
  return cli(["login", "--server", server, "--email", ADMIN.email, "--password-stdin"], {
    cwd: dir,
    home: dir,
    stdin: `${ADMIN.password}\n`,
  });
}

describe("health login", () => {
  test("--password-stdin signs in and stores the session 0600 in a 0700 HEALTH_HOME", async () => {
    await using server = await startTestServer(adminEnv);
    using dir = tempDir("health-cli-auth-");
    const home = join(dir, "home");
    const result = await cli(["login", "--server", server.url, "--email", ADMIN.email, "--password-stdin"], {
      cwd: dir,
      home,
      stdin: `${ADMIN.password}\n`,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Logged in to ${server.url} as ${ADMIN.email}`);
    expect(mode(join(home, "credentials.json"))).toBe(0o600);
    expect(mode(home)).toBe(0o700);
    const stored = storedCredentials(home);
    expect(stored.server).toBe(server.url);
    expect(stored.session?.secret).toStartWith("hss_");
    // The session secret is stored, never printed.
    expect(`${result.stdout}${result.stderr}`).not.toContain(stored.session?.secret ?? "-");

    const whoami = await cli(["whoami", "--json"], { cwd: dir, home });
    expect(whoami.code).toBe(0);
    expect(json<{ server: string; session: { email: string; role: string } }>(whoami)).toMatchObject({
      server: server.url,
      session: { email: ADMIN.email },
      token: null,
    });
  });

  test("a wrong password fails with one clear line (exit 1); no stdin password is a usage error", async () => {
    await using server = await startTestServer(adminEnv);
    using dir = tempDir("health-cli-auth-");
    const wrong = await cli(["login", "--server", server.url, "--email", ADMIN.email, "--password-stdin"], {
      cwd: dir,
      home: dir,
      stdin: "not the password\n",
    });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr.trim()).toBe("✖ Wrong email or password");
    const empty = await cli(["login", "--server", server.url, "--email", ADMIN.email, "--password-stdin"], {
      cwd: dir,
      home: dir,
      stdin: "",
    });
    expect(empty.code).toBe(2);
  });

  test("health login --email without a terminal says to use --password-stdin, exit 2, and does not hang", async () => {
    using dir = tempDir("health-cli-auth-");
    const result = await cli(["login", "--email", ADMIN.email], { cwd: dir, home: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("needs a terminal");
    expect(result.stderr).toContain("--password-stdin");
  });

  test("health login --email in a terminal asks for a masked password", async () => {
    await using server = await startTestServer(adminEnv);
    using dir = tempDir("health-cli-auth-");
    let output = "";
    const decoder = new TextDecoder();
    await using terminal = new Bun.Terminal({
      cols: 100,
      rows: 20,
      data(_terminal, data) {
        output += decoder.decode(data, { stream: true });
      },
    });
    const login = Bun.spawn([process.execPath, CLI_BIN, "login", "--server", server.url, "--email", ADMIN.email], {
      cwd: dir,
      env: cliEnv(dir),
      terminal,
    });
    await until("the password prompt", () => output.includes(`Password for ${ADMIN.email}: `));
    terminal.write(`${ADMIN.password}\r`);
    expect(await login.exited).toBe(0);
    await until("the result", () => output.includes("Logged in"));
    expect(output).toContain("*".repeat(ADMIN.password.length));
    expect(output).not.toContain(ADMIN.password);
    expect(storedCredentials(dir).session?.secret).toStartWith("hss_");
  });

  test("--token stores a system key after checking it against /cli/account; a bad token is refused", async () => {
    await using server = await startTestServer(adminEnv);
    using dir = tempDir("health-cli-auth-");
    const bad = await cli(["login", "--server", server.url, "--token", "not-a-real-token-0123456789"], {
      cwd: dir,
      home: dir,
    });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("rejected this token");

    const good = await cli(["login", "--server", server.url, "--token", server.systemKey], { cwd: dir, home: dir });
    expect(good.code).toBe(0);
    expect(good.stdout).not.toContain(server.systemKey);
    expect(storedCredentials(dir).token?.secret).toBe(server.systemKey);
    const whoami = await cli(["whoami", "--json"], { cwd: dir, home: dir });
    expect(whoami.code).toBe(0);
    expect(json<{ token: { company: string; scopes: string[] } }>(whoami).token.scopes).toContain("cli:run");
  });

  test("health setup creates the first admin with the one-time code and signs in", async () => {
    await using server = await startTestServer();
    using dir = tempDir("health-cli-auth-");
    expect(server.setupCode).toBeString();
    const result = await cli(
      [
        "setup",
        "--server",
        server.url,
        "--code",
        server.setupCode ?? "",
        "--email",
        "first@example.com",
        "--password-stdin",
      ],
      {
        cwd: dir,
        home: dir,
        stdin: "a long enough password",
      },
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("first@example.com");
    const again = await cli(
      [
        "setup",
        "--server",
        server.url,
        "--code",
        server.setupCode ?? "",
        "--email",
        "second@example.com",
        "--password-stdin",
      ],
      {
        cwd: dir,
        home: dir,
        stdin: "a long enough password",
      },
    );
    expect(again.code).toBe(1);
  });
});

describe("health tokens", () => {
  test("create --json, list (JSON and table, revoked marked), revoke, and login with the new cli:run token", async () => {
    await using server = await startTestServer(adminEnv);
    using dir = tempDir("health-cli-tokens-");
    expect((await loginAdmin(server.url, dir)).code).toBe(0);

    const created = await cli(
      ["tokens", "create", "--name", "planner", "--scope", "cli:run", "--scope", "loop:run", "--json"],
      { cwd: dir, home: dir },
    );
    expect(created.code).toBe(0);
    const token = json<Record<string, unknown>>(created);
    expect(Object.keys(token).sort()).toEqual(["id", "lastFour", "name", "orgId", "prefix", "scopes", "token"]);
    expect(token).toMatchObject({ name: "planner", scopes: ["cli:run", "loop:run"] });
    expect(String(token.token)).toMatch(/^hlth_[0-9A-Za-z]{38}$/);

    const readable = await cli(["tokens", "create", "--name", "trigger", "--scope", "loop:run"], {
      cwd: dir,
      home: dir,
    });
    expect(readable.code).toBe(0);
    expect(readable.stdout).toMatch(/Token\s+hlth_/);
    expect(readable.stderr).toContain("Store this token now");

    const list = await cli(["tokens", "list", "--json"], { cwd: dir, home: dir });
    const tokens = json<TokenView[]>(list);
    expect(tokens.map((t) => t.name).sort()).toEqual(["planner", "trigger"]);
    // The list never carries a token's value.
    expect(list.stdout).not.toContain(String(token.token));

    const trigger = tokens.find((t) => t.name === "trigger");
    const revoked = await cli(["tokens", "revoke", trigger?.id ?? "", "--json"], { cwd: dir, home: dir });
    expect(revoked.code).toBe(0);
    expect(json<TokenView>(revoked).revokedAt).toBeString();
    const twice = await cli(["tokens", "revoke", trigger?.id ?? ""], { cwd: dir, home: dir });
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain("already revoked");
    const badId = await cli(["tokens", "revoke", "nope"], { cwd: dir, home: dir });
    expect(badId.code).toBe(2);

    const table = await cli(["tokens", "list"], { cwd: dir, home: dir });
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID\s+NAME\s+TOKEN\s+SCOPES\s+CREATED\s+LAST USED\s+STATUS$/);
    const revokedLine = lines.find((line) => line.includes("trigger"));
    expect(revokedLine).toMatch(/revoked (?:just now|\d+ s ago)/);
    expect(lines.find((line) => line.includes("planner"))).toContain(`${token.prefix}…${token.lastFour}`);
    expect(lines.find((line) => line.includes("planner"))).toMatch(/active$/);

    // In colour, a revoked row is struck through.
    const coloured = await cli(["tokens", "list"], { cwd: dir, home: dir, env: { NO_COLOR: "", FORCE_COLOR: "1" } });
    const struck = coloured.stdout.split("\n").find((line) => line.includes("trigger"));
    expect(struck).toContain("\x1b[9m");

    // The cli:run token logs in for hosted planning; whoami reports its company and scopes.
    const tokenLogin = await cli(["login", "--token-stdin"], { cwd: dir, home: dir, stdin: String(token.token) });
    expect(tokenLogin.code).toBe(0);
    expect(tokenLogin.stdout).toContain('token "planner"');
    const whoami = await cli(["whoami", "--json"], { cwd: dir, home: dir });
    expect(
      json<{ session: { email: string }; token: { token_name: string; scopes: string[]; company: string } }>(whoami),
    ).toMatchObject({
      session: { email: ADMIN.email },
      token: { token_name: "planner", scopes: ["cli:run", "loop:run"], company: server.defaultOrg.slug },
    });
  });

  test("tokens without a session, or with an expired one, say what to do (exit 1)", async () => {
    await using server = await startTestServer(adminEnv);
    using dir = tempDir("health-cli-tokens-");
    const none = await cli(["tokens", "list", "--server", server.url], { cwd: dir, home: dir });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("health login");

    expect((await loginAdmin(server.url, dir)).code).toBe(0);
    const path = join(dir, "credentials.json");
    const stored = storedCredentials(dir);
    writeFileSync(
      path,
      JSON.stringify({ ...stored, session: { ...stored.session, expiresAt: "2020-01-01T00:00:00.000Z" } }),
      { mode: 0o600 },
    );
    const expired = await cli(["tokens", "list"], { cwd: dir, home: dir });
    expect(expired.code).toBe(1);
    expect(expired.stderr.trim()).toBe("✖ Your session expired; run health login");

    // A session the server no longer knows reads the same.
    writeFileSync(path, JSON.stringify({ ...stored, session: { ...stored.session, secret: "hss_unknown" } }), {
      mode: 0o600,
    });
    const unknown = await cli(["whoami"], { cwd: dir, home: dir });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim()).toBe("✖ Your session expired; run health login");
  });

  test("stored credentials are never sent to another server", async () => {
    await using server = await startTestServer(adminEnv);
    using dir = tempDir("health-cli-tokens-");
    expect((await loginAdmin(server.url, dir)).code).toBe(0);
    const elsewhere = await cli(["tokens", "list", "--server", "http://127.0.0.1:9"], { cwd: dir, home: dir });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toContain(`logged in to ${server.url}`);
  });
});

describe("health logout", () => {
  test("revokes the session on the server and deletes the credentials", async () => {
    await using server = await startTestServer(adminEnv);
    using dir = tempDir("health-cli-logout-");
    expect((await loginAdmin(server.url, dir)).code).toBe(0);
    const secret = storedCredentials(dir).session?.secret ?? "";
    const result = await cli(["logout"], { cwd: dir, home: dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Revoked the session");
    expect(() => statSync(join(dir, "credentials.json"))).toThrow();
    const rejected = await trpcClient(server.url, secret)
      .auth.me.query()
      .then(
        () => "accepted",
        (error: unknown) => (error instanceof TRPCClientError ? String(error.data?.code) : "other"),
      );
    expect(rejected).toBe("UNAUTHORIZED");
    const whoami = await cli(["whoami"], { cwd: dir, home: dir });
    expect(whoami.code).toBe(1);
    expect(whoami.stderr).toContain("not logged in");
    const again = await cli(["logout"], { cwd: dir, home: dir });
    expect(again.code).toBe(0);
  });
});

describe("health loops list", () => {
  test("prints [{ id, name, orgId, triggerUrl }] (docs/interface.md §12.3) and a table", async () => {
    await using server = await startTestServer({ ...adminEnv, HEALTH_LOOPS_DIR: join(import.meta.dir, "..", "loops") });
    using dir = tempDir("health-cli-loops-");
    expect((await loginAdmin(server.url, dir)).code).toBe(0);
    const result = await cli(["loops", "list", "--json"], { cwd: dir, home: dir });
    expect(result.code).toBe(0);
    const loops = json<Array<Record<string, string>>>(result);
    const intake = loops.find((loop) => loop.id === "loop_intake");
    expect(Object.keys(intake ?? {}).sort()).toEqual(["id", "name", "orgId", "triggerUrl"]);
    expect(intake?.triggerUrl).toBe(`${server.url}/loop/${server.defaultOrg.id}/loop_intake`);
    const table = await cli(["loops", "list"], { cwd: dir, home: dir });
    expect(table.stdout).toMatch(/^ID\s+NAME\s+LAST 24 H\s+TRIGGER URL\n/);
    expect(table.stdout).toMatch(/loop_intake\s+IntakeLoop\s+no runs\s+http/);
    expect(table.stderr).toBe("");
  });

  test("names the modules the server skipped, with the line to fix, on stderr", async () => {
    using loops = tempDir("health-cli-skipped-");
    writeFileSync(
      join(loops, "typo.ts"),
      'import { Workflow } from "health/loop";\nexport class T extends Workflow {\n  run( {}\n}\n',
    );
    await using server = await startTestServer({ ...adminEnv, HEALTH_LOOPS_DIR: `${loops}` });
    using dir = tempDir("health-cli-loops-");
    expect((await loginAdmin(server.url, dir)).code).toBe(0);
    const result = await cli(["loops", "list"], { cwd: dir, home: dir });
    expect(result).toMatchObject({ code: 0, stdout: "No loops in this organization yet.\n" });
    // Two syntax errors: Bun reports them together; the first is where to look.
    const typo = join(`${loops}`, "typo.ts");
    expect(result.stderr).toBe(
      `Skipped ${typo}:4:1: the module failed to load: Expected ")" but found "}" ` +
        `(1 more: ${typo}:4:2: Expected "}" but found end of file)\n`,
    );
  });
});
