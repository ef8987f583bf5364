import { router } from "../trpc.ts";
import { authRouter } from "./auth.ts";
import { deviceRouter } from "./device.ts";
import { loopsRouter } from "./loops.ts";
import { runsRouter } from "./runs.ts";
import { tokensRouter } from "./tokens.ts";
import { usageRouter } from "./usage.ts";

export const appRouter = router({
  auth: authRouter,
  tokens: tokensRouter,
  loops: loopsRouter,
  runs: runsRouter,
  device: deviceRouter,
  usage: usageRouter,
});

/** The only thing the console and typed clients import from the server. */
export type AppRouter = typeof appRouter;
