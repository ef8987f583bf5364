/**
 * Turns validation issues into the `errors: [{ path, message }]` of a problem document or a tRPC
 * error. Standard Schema issues (valibot's among them) carry paths of keys or `{ key }` items.
 */
export interface FieldError {
  path: string;
  message: string;
}

export interface StandardIssue {
  message: string;
  path?: ReadonlyArray<PropertyKey | { key: unknown }> | undefined;
}

export function issuePath(issue: StandardIssue): string {
  return (issue.path ?? [])
    .map((item) => String(typeof item === "object" && item !== null && "key" in item ? item.key : item))
    .join(".");
}

export function flattenIssues(issues: readonly StandardIssue[]): FieldError[] {
  return issues.map((issue) => ({ path: issuePath(issue), message: issue.message }));
}
