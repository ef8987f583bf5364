/** A real typed tRPC client against a test server, signed in with a bearer session. */
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import type { AppRouter } from "../../server/trpc/routers/_app.ts";

export function trpcClient(baseUrl: string, session?: string) {
  return createTRPCClient<AppRouter>({
    links: [
      httpBatchLink({
        url: `${baseUrl}/trpc`,
        headers: () => (session ? { authorization: `Bearer ${session}` } : {}),
      }),
    ],
  });
}

export const ADMIN = { email: "admin@example.com", password: "correct horse battery staple" };

export const adminEnv = { HEALTH_ADMIN_EMAIL: ADMIN.email, HEALTH_ADMIN_PASSWORD: ADMIN.password };

export async function signIn(baseUrl: string, who = ADMIN) {
  const { sessionToken } = await trpcClient(baseUrl).auth.login.mutate(who);
  return { session: sessionToken, client: trpcClient(baseUrl, sessionToken) };
}
