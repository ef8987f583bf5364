/** The credentials hosted planning sends: a stored system key or `cli:run` token, never a session. */
import { CliError } from "../errors.ts";
import { storedToken } from "../lib/auth.ts";
import { readCredentials, readSettings } from "../lib/home.ts";
import { credentialsFor, notLoggedIn, resolveServer } from "../lib/server.ts";
import type { HostedLogin } from "./turn.ts";

/** The hosted login for the resolved server, or undefined when none is stored. */
export function findHostedLogin(serverFlag: string | undefined): HostedLogin | undefined {
  const stored = storedToken(serverFlag);
  if (stored === undefined) return undefined;
  // settings.json's company is the builder's explicit choice; the token's company is a default.
  const company = readSettings().company ?? stored.token.company;
  return { server: stored.server, token: stored.token.secret, company };
}

export function requireHostedLogin(serverFlag: string | undefined): HostedLogin {
  const login = findHostedLogin(serverFlag);
  if (login !== undefined) return login;
  const credentials = readCredentials();
  const server = resolveServer(serverFlag, credentials).url;
  const session = credentialsFor(server, credentials)?.session;
  const why =
    session !== undefined
      ? `The admin session of ${session.email} is not accepted by the planning endpoint.`
      : `${notLoggedIn(server, credentials)}.`;
  throw new CliError(`Hosted planning needs a stored system key or cli:run token. ${why}`, {
    hint: "Run health login --token <token> (an admin creates one with health tokens create --name cli --scope cli:run)",
  });
}
