/** Turns valibot issues into the `errors: [{ path, message }]` list of a problem document. */
import type * as v from "valibot";

export interface FieldError {
  path: string;
  message: string;
}

type AnyIssue = v.BaseIssue<unknown>;

export function issuePath(issue: AnyIssue): string {
  if (!issue.path || issue.path.length === 0) return "";
  return issue.path.map((item) => String(item.key)).join(".");
}

export function flattenIssues(issues: readonly AnyIssue[]): FieldError[] {
  return issues.map((issue) => ({ path: issuePath(issue), message: issue.message }));
}
