/**
 * Worker entry that imports one loop module and reports whether it loads, so that a module whose
 * top-level code hangs (a loop, an await that never settles) is caught with a timeout instead of
 * freezing the server while it starts.
 */
import { describeLoadError, type LoadFailure } from "./load-error.ts";
import { resolveLoopSdk } from "./sdk-resolver.ts";

resolveLoopSdk();

interface ProbeScope {
  postMessage(message: ProbeReply): void;
  onmessage: ((event: MessageEvent<{ file: string }>) => void) | null;
}

export type ProbeReply = { ok: true } | { ok: false; failure: LoadFailure };

const scope = globalThis as unknown as ProbeScope;

scope.onmessage = function probeModule(event) {
  import(event.data.file).then(
    () => scope.postMessage({ ok: true }),
    (error: unknown) => {
      scope.postMessage({ ok: false, failure: describeLoadError(error, event.data.file) });
    },
  );
};
