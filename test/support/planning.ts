/** Builders of planning requests as the CLI sends them (docs/interface.md §2.1, §4.1). */
export function planningBody(overrides: Record<string, unknown> = {}) {
  return {
    session_id: crypto.randomUUID(),
    turn_id: crypto.randomUUID(),
    redacted_prompt: "build an intake agent for our clinic's SMS line",
    intent: "build_agent",
    route_context: { hosted: true },
    safety_checks: ["developer-infrastructure-only"],
    workspace_manifest: null,
    ...overrides,
  };
}

export function postPlan(
  baseUrl: string,
  token: string,
  body: unknown = planningBody(),
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${baseUrl}/cli/code/sessions`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}
