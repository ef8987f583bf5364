import pkg from "../../package.json" with { type: "json" };

/** Sent as `X-Service-CLI-Version` and printed by `health --version`. */
export const CLI_VERSION: string = pkg.version;
