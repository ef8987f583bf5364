/** Errors of the token procedures, in the builder's words. */
import { CliError, UsageError } from "../errors.ts";
import { sessionExpired, type TrpcFailure } from "./api.ts";

export function tokenFailure(failure: TrpcFailure): CliError | undefined {
  switch (failure.code) {
    case "UNAUTHORIZED":
      return sessionExpired();
    case "FORBIDDEN":
      return new CliError("Only owners and admins can manage tokens", { hint: "Ask an admin of your organization" });
    case "BAD_REQUEST":
      // The server validates names, scopes and ids; a bad one is a wrong invocation.
      return new UsageError(failure.message);
    default:
      return undefined;
  }
}
