/**
 * The console's only way to the server: the typed tRPC client. The session is the httpOnly
 * cookie set by `auth.login`, which the browser sends on these same-origin calls by itself; the
 * console never sees or stores it.
 */
import { createTRPCClient, httpBatchLink, TRPCClientError, type TRPCLink } from "@trpc/client";
import type { inferRouterOutputs } from "@trpc/server";
import { observable } from "@trpc/server/observable";
import type { AppRouter } from "../server/trpc/routers/_app.ts";

type Outputs = inferRouterOutputs<AppRouter>;
export type Me = Outputs["auth"]["me"];
export type Token = Outputs["tokens"]["list"][number];
export type Loop = Outputs["loops"]["list"][number];
export type LoopModuleProblem = Outputs["loops"]["skipped"][number];
export type RunSummary = Outputs["runs"]["list"]["runs"][number];
export type Run = Outputs["runs"]["get"];
export type RunStep = Run["steps"][number];
export type RunStatus = RunSummary["status"];
export type DeviceRequest = Outputs["device"]["lookup"];
export type Usage = Outputs["usage"]["summary"];

const signedOutListeners = new Set<() => void>();

/** Called whenever the server says the session is gone (expired, signed out elsewhere). */
export function onSignedOut(listener: () => void): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

// A wrong password is also UNAUTHORIZED: only calls made while signed in end the session.
const SIGN_IN_PATHS = new Set(["auth.login", "auth.setup"]);

/** Watches every answer in one place, so no screen has to remember to handle an expired session. */
function sessionLink(): TRPCLink<AppRouter> {
  return () =>
    function watchSession({ op, next }) {
      return observable((observer) =>
        next(op).subscribe({
          next: (value) => observer.next(value),
          error(error) {
            if (error.data?.code === "UNAUTHORIZED" && !SIGN_IN_PATHS.has(op.path)) {
              for (const listener of signedOutListeners) listener();
            }
            observer.error(error);
          },
          complete: () => observer.complete(),
        }),
      );
    };
}

export const api = createTRPCClient<AppRouter>({
  links: [sessionLink(), httpBatchLink({ url: "/trpc" })],
});

/** The tRPC error code of a failed call (`UNAUTHORIZED`, `NOT_FOUND`, …), if the server answered. */
export function errorCode(error: unknown): string | undefined {
  return error instanceof TRPCClientError ? (error as TRPCClientError<AppRouter>).data?.code : undefined;
}

/** A sentence for the person at the screen; the server's messages are written for people. */
export function errorMessage(error: unknown): string {
  if (error instanceof TRPCClientError) {
    if (error.message === "Failed to fetch") return "The server could not be reached. Check that it is running.";
    return error.message;
  }
  return error instanceof Error ? error.message : "Something went wrong.";
}
