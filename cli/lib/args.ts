/** Arguments many commands share, defined once and spread into each command's `args`. */
import type { ArgsDef } from "citty";

export const serverArg = {
  server: {
    type: "string",
    description: "Server URL (default: HEALTH_URL, the stored login's server, settings.json, http://127.0.0.1:3000)",
    valueHint: "url",
  },
} as const satisfies ArgsDef;

export const jsonArg = {
  json: { type: "boolean", description: "Print JSON" },
} as const satisfies ArgsDef;
