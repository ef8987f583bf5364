/**
 * Which loops each organization has. The default organization's loops are the modules of
 * HEALTH_LOOPS_DIR; other organizations have none until they can deploy their own.
 */
import type { LoopDefinition, LoopLoadError } from "../../core/loop/registry.ts";

export interface LoopCatalog {
  list(orgId: string): LoopDefinition[];
  get(orgId: string, loopId: string): LoopDefinition | undefined;
  /** The modules of the organization's loops folder that were skipped, and why. */
  skipped(orgId: string): LoopLoadError[];
  /** All loops the engine can run, by id. */
  all(): Map<string, LoopDefinition>;
}

export function defaultOrgCatalog(
  defaultOrgId: string,
  loops: Map<string, LoopDefinition>,
  skipped: LoopLoadError[] = [],
): LoopCatalog {
  return {
    skipped: (orgId) => (orgId === defaultOrgId ? skipped : []),
    list: (orgId) => (orgId === defaultOrgId ? [...loops.values()].sort((a, b) => a.id.localeCompare(b.id)) : []),
    get: (orgId, loopId) => (orgId === defaultOrgId ? loops.get(loopId) : undefined),
    all: () => loops,
  };
}
