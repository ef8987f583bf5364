import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import { TRPCClientError } from "@trpc/client";
import fc from "fast-check";
import { generateToken, isWellFormedToken } from "../core/tokens.ts";
import { SqliteTokenStore } from "../server/services/token-store-sqlite.ts";
import { openDatabase } from "../server/db.ts";
import { postPlan } from "./support/planning.ts";
import { startTestServer, tempDir } from "./support/server.ts";
import { ADMIN, adminEnv, signIn, trpcClient } from "./support/trpc.ts";

async function rejection(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    if (error instanceof TRPCClientError) return { code: error.data?.code as string, message: error.message };
    throw error;
  }
  throw new Error("expected a rejection");
}

describe("token format", () => {
  test("generated tokens are well formed, unique, and any single-character typo is rejected", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const token = generateToken();
      expect(token).toMatch(/^hlth_[0-9A-Za-z]{38}$/);
      expect(isWellFormedToken(token)).toBe(true);
      seen.add(token);
    }
    expect(seen.size).toBe(200);
    fc.assert(
      fc.property(fc.integer({ min: 5, max: 42 }), fc.constantFrom(..."0123456789abcXYZ"), (index, char) => {
        const token = generateToken();
        if (token[index] === char) return;
        const typo = token.slice(0, index) + char + token.slice(index + 1);
        expect(isWellFormedToken(typo)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  test("the parser never throws and accepts nothing but the format", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (s) => {
        const ok = isWellFormedToken(s);
        if (ok) expect(s).toMatch(/^hlth_/);
      }),
      { numRuns: 1000 },
    );
  });
});

describe("admin sessions", () => {
  test("wrong password and unknown email get the same answer; failures are rate-limited", async () => {
    await using server = await startTestServer(adminEnv);
    const client = trpcClient(server.url);
    const wrong = await rejection(client.auth.login.mutate({ email: ADMIN.email, password: "wrong password!!" }));
    const unknown = await rejection(
      client.auth.login.mutate({ email: "nobody@example.com", password: "wrong password!!" }),
    );
    expect(wrong).toEqual({ code: "UNAUTHORIZED", message: "Wrong email or password" });
    expect(unknown).toEqual(wrong);
    for (let i = 0; i < 4; i++)
      await rejection(client.auth.login.mutate({ email: ADMIN.email, password: "nope nope nope" }));
    const limited = await rejection(client.auth.login.mutate(ADMIN));
    expect(limited.code).toBe("TOO_MANY_REQUESTS");
  });

  test("a forged or expired session is refused; me and logout work", async () => {
    await using server = await startTestServer(adminEnv);
    expect((await rejection(trpcClient(server.url, "hss_forged").tokens.list.query())).code).toBe("UNAUTHORIZED");
    expect((await rejection(trpcClient(server.url).tokens.list.query())).code).toBe("UNAUTHORIZED");
    const { client, session } = await signIn(server.url);
    expect(await client.auth.me.query()).toMatchObject({ email: ADMIN.email, role: "owner", org: { slug: "default" } });
    const db = new Database(server.dbPath);
    db.run("UPDATE sessions SET expiresAt = 1");
    expect((await rejection(trpcClient(server.url, session).auth.me.query())).code).toBe("UNAUTHORIZED");
    db.close();
    const fresh = await signIn(server.url);
    await fresh.client.auth.logout.mutate();
    expect((await rejection(fresh.client.auth.me.query())).code).toBe("UNAUTHORIZED");
  });

  test("login sets an httpOnly SameSite=Strict cookie that authenticates the console", async () => {
    await using server = await startTestServer(adminEnv);
    const response = await fetch(`${server.url}/trpc/auth.login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(ADMIN),
    });
    const cookie = response.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^health_session=hss_[0-9A-Za-z]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
    const me = await fetch(`${server.url}/trpc/auth.me`, { headers: { cookie: cookie.split(";")[0] ?? "" } });
    expect(me.status).toBe(200);
    expect((await me.json()).result.data.email).toBe(ADMIN.email);
  });

  test("with no admin configured, a one-time setup code creates the first admin", async () => {
    await using server = await startTestServer();
    const code = server.setupCode ?? "";
    expect(code).toMatch(/^[0-9A-Za-z]{24}$/);
    expect(server.logs.join("\n")).toContain(code);
    const client = trpcClient(server.url);
    expect(await client.auth.status.query()).toEqual({ needsSetup: true });
    expect((await rejection(client.auth.setup.mutate({ code: "wrong", ...ADMIN }))).code).toBe("UNAUTHORIZED");
    const weak = await rejection(client.auth.setup.mutate({ code, email: ADMIN.email, password: "short" }));
    expect(weak).toMatchObject({ code: "BAD_REQUEST", message: "password: password must be at least 12 characters" });
    await client.auth.setup.mutate({ code, ...ADMIN });
    expect((await rejection(client.auth.setup.mutate({ code, ...ADMIN }))).code).toBe("CONFLICT");
    await signIn(server.url);
  });
});

describe("token lifecycle", () => {
  test("mint, shown once, list, use, revoke: the next request fails; the database holds no plaintext", async () => {
    await using server = await startTestServer(adminEnv);
    const { client } = await signIn(server.url);
    const created = await client.tokens.create.mutate({ name: "ci-planner", scopes: ["cli:run"] });
    expect(created).toMatchObject({
      name: "ci-planner",
      scopes: ["cli:run"],
      prefix: created.token.slice(0, 8),
      lastFour: created.token.slice(-4),
    });
    expect(created.token).toMatch(/^hlth_/);

    const listed = await client.tokens.list.query();
    expect(listed).toHaveLength(1);
    expect(JSON.stringify(listed)).not.toContain(created.token);
    expect(listed[0]).toMatchObject({ id: created.id, lastUsedAt: null, revokedAt: null });

    // A cli:run token plans for its own organization's company.
    const planned = await postPlan(server.url, created.token, undefined, { "x-service-company": "someone-else" });
    expect(planned.status).toBe(200);
    const account = await (
      await fetch(`${server.url}/cli/account`, { headers: { authorization: `Bearer ${created.token}` } })
    ).json();
    expect(account).toMatchObject({ company: "default", token_name: "ci-planner" });

    // lastUsedAt is written behind, once.
    server.flush();
    const used = (await client.tokens.list.query())[0]?.lastUsedAt;
    expect(used).toEqual(expect.any(String));
    await postPlan(server.url, created.token);
    server.flush();
    expect((await client.tokens.list.query())[0]?.lastUsedAt).toBe(used ?? "");

    const revoked = await client.tokens.revoke.mutate({ id: created.id });
    expect(revoked.revokedAt).toEqual(expect.any(String));
    expect((await postPlan(server.url, created.token)).status).toBe(401);
    expect((await rejection(client.tokens.revoke.mutate({ id: created.id }))).code).toBe("CONFLICT");
    expect((await client.tokens.list.query())[0]?.revokedAt).toBe(revoked.revokedAt);

    server.flush();
    const bytes = [
      readFileSync(server.dbPath, "latin1"),
      (() => {
        try {
          return readFileSync(`${server.dbPath}-wal`, "latin1");
        } catch {
          return "";
        }
      })(),
    ].join("");
    expect(bytes).not.toContain(created.token);
    expect(bytes).not.toContain(created.token.slice(8, -4));
  });

  test("revoked through one instance, refused by another on the very next request (revocation is never cached)", async () => {
    using dir = tempDir();
    await using a = await startTestServer(adminEnv, dir);
    await using b = await startTestServer(adminEnv, dir);
    const { client } = await signIn(a.url);
    const created = await client.tokens.create.mutate({ name: "shared", scopes: ["cli:run", "loop:run"] });
    const account = (url: string) =>
      fetch(`${url}/cli/account`, { headers: { authorization: `Bearer ${created.token}` } }).then((r) => r.status);
    // Both instances have just used the token, so anything kept per instance would be warm.
    expect([await account(a.url), await account(b.url), (await postPlan(b.url, created.token)).status]).toEqual([
      200, 200, 200,
    ]);
    await client.tokens.revoke.mutate({ id: created.id });
    expect(await account(b.url)).toBe(401);
    expect((await postPlan(b.url, created.token)).status).toBe(401);
    const trigger = await fetch(`${b.url}/loop/${created.orgId}/loop_intake`, {
      method: "POST",
      headers: { authorization: `Bearer ${created.token}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(trigger.status).toBe(401);
    expect(await account(a.url)).toBe(401);
  });

  test("a token without cli:run is 403 on the planning endpoint", async () => {
    await using server = await startTestServer(adminEnv);
    const { client } = await signIn(server.url);
    const loopToken = await client.tokens.create.mutate({ name: "loops", scopes: ["loop:run"] });
    const response = await postPlan(server.url, loopToken.token);
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toBe('Bearer realm="health", error="insufficient_scope"');
  });

  test("bad input is refused with clear errors and nothing changes", async () => {
    await using server = await startTestServer(adminEnv);
    const { client } = await signIn(server.url);
    const cases: Array<[{ name: string; scopes: string[] }, string]> = [
      [{ name: "x", scopes: ["admin:all"] }, "scopes.0: scope must be loop:run, loop:run:<loopId> (loop_…) or cli:run"],
      [{ name: "x", scopes: ["loop:run:"] }, "scopes.0: scope must be loop:run, loop:run:<loopId> (loop_…) or cli:run"],
      [{ name: "x", scopes: [] }, "scopes: give at least one scope"],
      [{ name: "x".repeat(10_000), scopes: ["loop:run"] }, "name: name must be at most 100 characters"],
      [{ name: "bad\u001b[2Jname", scopes: ["loop:run"] }, "name: name must not contain control characters"],
      [{ name: "   ", scopes: ["loop:run"] }, "name: name must not be empty"],
    ];
    for (const [input, message] of cases) {
      expect(await rejection(client.tokens.create.mutate(input))).toEqual({ code: "BAD_REQUEST", message });
    }
    expect(await client.tokens.list.query()).toEqual([]);
    expect((await rejection(client.tokens.revoke.mutate({ id: "tok_doesnotexist" }))).code).toBe("NOT_FOUND");
  });

  test("another organization's token id cannot be revoked or seen", async () => {
    await using server = await startTestServer(adminEnv);
    const { client } = await signIn(server.url);
    const db = openDatabase(`file:${server.dbPath}`);
    db.sqlite.run("INSERT INTO organizations (id, slug, name, createdAt) VALUES ('org_other', 'other', 'Other', 0)");
    const foreign = new SqliteTokenStore(db).createSync({
      orgId: "org_other",
      name: "theirs",
      scopes: ["loop:run"],
      actor: { kind: "system", id: "test" },
    });
    db.close();
    expect((await rejection(client.tokens.revoke.mutate({ id: foreign.id }))).code).toBe("NOT_FOUND");
    expect((await client.tokens.list.query()).map((t) => t.id)).not.toContain(foreign.id);
  });
});
