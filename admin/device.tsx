/**
 * Device login: approve or deny a `health login` waiting in a terminal, by the code it shows
 * (the verification page of RFC 8628). A link with `?code=XXXX-XXXX` fills the code in and looks
 * it up, but approving still asks the admin to compare it with the terminal: such a link can be
 * sent by anyone, and approving signs that terminal in as the admin.
 */
import type { TargetedSubmitEvent } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, type DeviceRequest, errorCode, errorMessage, type Me } from "./api.ts";
import { paths } from "./router.tsx";
import { fieldValue, PageTitle, Time } from "./ui.tsx";

type Outcome = { decision: "approved" | "denied"; clientName: string; userCode: string };

/** What people type: any case, with or without the dash, with stray spaces (the server does the same). */
const normalize = (code: string): string => code.toUpperCase().replace(/[\s-]/g, "");

function codeFromUrl(): string {
  return (new URLSearchParams(location.search).get("code") ?? "").trim().slice(0, 32);
}

/** Says what went wrong in words for the person holding the terminal. */
function lookupFailure(error: unknown): string {
  return errorCode(error) === "BAD_REQUEST"
    ? "That is not a code from health login: it is 8 letters, such as BCDF-GHJK."
    : errorMessage(error);
}

export function DevicePage({ me }: { me: Me }) {
  const initialCode = useRef(codeFromUrl()).current;
  const [request, setRequest] = useState<DeviceRequest | null>(null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<"lookup" | "approve" | "deny" | null>(null);
  const requestRef = useRef<HTMLHeadingElement>(null);
  const outcomeRef = useRef<HTMLDivElement>(null);
  const inputRef = useRef<HTMLInputElement>(null);

  async function lookUp(code: string) {
    const userCode = normalize(code);
    if (!/^[A-Z]{8}$/.test(userCode)) {
      setRequest(null);
      setError("Enter the 8-letter code that health login shows in your terminal, such as BCDF-GHJK.");
      return;
    }
    setBusy("lookup");
    setError(null);
    setOutcome(null);
    try {
      setRequest(await api.device.lookup.query({ userCode }));
    } catch (failure) {
      setRequest(null);
      setError(lookupFailure(failure));
    } finally {
      setBusy(null);
    }
  }

  // A deep link is looked up at once; the admin still has to press Approve.
  useEffect(() => {
    if (initialCode !== "") void lookUp(initialCode);
  }, []);

  // Move focus to what just appeared, so keyboard and screen-reader users continue from there.
  useEffect(() => {
    if (request !== null) requestRef.current?.focus();
  }, [request]);
  useEffect(() => {
    if (outcome !== null) outcomeRef.current?.focus();
  }, [outcome]);

  function submit(event: TargetedSubmitEvent<HTMLFormElement>) {
    event.preventDefault();
    void lookUp(fieldValue(event.currentTarget, "code"));
  }

  async function decide(decision: "approve" | "deny", current: DeviceRequest) {
    setBusy(decision);
    setError(null);
    try {
      const call = decision === "approve" ? api.device.approve : api.device.deny;
      const decided = await call.mutate({ userCode: normalize(current.userCode) });
      setRequest(null);
      setOutcome({ decision: decided.status, clientName: decided.clientName, userCode: decided.userCode });
      // The code is used up: the field is ready for the next one, and a reload does not look it up again.
      if (inputRef.current !== null) inputRef.current.value = "";
      if (location.search !== "") history.replaceState(null, "", paths.device());
    } catch (failure) {
      setError(errorMessage(failure));
    } finally {
      setBusy(null);
    }
  }

  return (
    <>
      <PageTitle title="Device login">Device login</PageTitle>
      <p class="lead">
        Sign in the <code>health</code> CLI on another machine: run <code>health login</code> there and enter the code
        it shows. Approving signs that terminal in as you ({me.email}).
      </p>
      <form class="card device-form" onSubmit={submit} aria-labelledby="device-code-title" noValidate>
        <h2 id="device-code-title">Code from your terminal</h2>
        <div class="field">
          <label for="device-code">Code</label>
          <input
            id="device-code"
            name="code"
            class="mono code-input"
            ref={inputRef}
            defaultValue={initialCode}
            maxLength={32}
            required
            autoComplete="off"
            autocapitalize="characters"
            spellcheck={false}
            aria-describedby={error !== null ? "device-code-hint device-error" : "device-code-hint"}
            aria-invalid={error !== null && request === null ? true : undefined}
          />
          <p id="device-code-hint" class="hint">
            8 letters, such as BCDF-GHJK. Case, spaces and the dash do not matter.
          </p>
        </div>
        <button type="submit" class={request !== null ? "secondary" : undefined} disabled={busy !== null}>
          {busy === "lookup" ? "Looking up…" : "Look up code"}
        </button>
      </form>
      {error !== null && (
        <div id="device-error" class="notice error device-error" role="alert">
          <p>{error}</p>
        </div>
      )}
      {request !== null && (
        <section class="card device-request" aria-labelledby="device-request-title">
          <h2 id="device-request-title" tabIndex={-1} ref={requestRef}>
            Sign-in request
          </h2>
          <dl class="facts">
            <div>
              <dt>Code</dt>
              <dd class="mono device-code">{request.userCode}</dd>
            </div>
            <div>
              <dt>From</dt>
              <dd>{request.clientName}</dd>
            </div>
            <div>
              <dt>Requested</dt>
              <dd>
                <Time iso={request.createdAt} />
              </dd>
            </div>
            <div>
              <dt>Expires</dt>
              <dd>
                <Time iso={request.expiresAt} />
              </dd>
            </div>
          </dl>
          <p class="warning">
            <strong>Approve only if you just ran health login and your terminal shows {request.userCode}.</strong> The
            terminal will be signed in as you.
          </p>
          <div class="device-actions">
            <button type="button" disabled={busy !== null} onClick={() => decide("approve", request)}>
              {busy === "approve" ? "Approving…" : "Approve"}
            </button>
            <button type="button" class="danger" disabled={busy !== null} onClick={() => decide("deny", request)}>
              {busy === "deny" ? "Denying…" : "Deny"}
            </button>
          </div>
        </section>
      )}
      <div class="device-outcome" role="status" tabIndex={-1} ref={outcomeRef}>
        {outcome !== null && <OutcomeNotice outcome={outcome} />}
      </div>
    </>
  );
}

function OutcomeNotice({ outcome }: { outcome: Outcome }) {
  return outcome.decision === "approved" ? (
    <div class="notice success">
      <p>
        <strong>Approved.</strong> {outcome.clientName} (code {outcome.userCode}) is now signed in as you. Go back to
        your terminal: it finishes within a few seconds.
      </p>
    </div>
  ) : (
    <div class="notice">
      <p>
        <strong>Denied.</strong> {outcome.clientName} (code {outcome.userCode}) was not signed in; its terminal says so.
      </p>
    </div>
  );
}
