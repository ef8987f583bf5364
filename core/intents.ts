/**
 * The closed list of intents a builder's prompt can have. The spec shows `build_agent` and
 * `clinical_blocked`; the rest map one-to-one onto what the `health` CLI can do, so the planner
 * can give each a fitting, shorter plan.
 */
export const intents = [
  /** Scaffold, route, build and verify a new agent loop: the default for builder text. */
  "build_agent",
  /** Add or change a route (task, prompt, handoff) in an existing workspace. */
  "configure_route",
  /** Show the tools an agent may call. */
  "list_tools",
  /** Build (and so deploy) the loop of an existing workspace. */
  "build_loop",
  /** Check a workspace, its manifest and its evals. */
  "verify_workspace",
  /** Sign the CLI in to a server. */
  "authenticate",
  /** A question about health itself: what a command, a loop or a plan is. */
  "explain",
  /** A request for clinical advice: answered with a redirect, never with a plan (docs/interface.md §1.2). */
  "clinical_blocked",
] as const;

export type Intent = (typeof intents)[number];

const intentSet: ReadonlySet<string> = new Set(intents);

export function isIntent(s: string): s is Intent {
  return intentSet.has(s);
}
