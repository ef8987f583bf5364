import { router } from "../trpc.ts";
import { authRouter } from "./auth.ts";
import { tokensRouter } from "./tokens.ts";

export const appRouter = router({
  auth: authRouter,
  tokens: tokensRouter,
});

/** The only thing the console and typed clients import from the server. */
export type AppRouter = typeof appRouter;
