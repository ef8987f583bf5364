/**
 * Settings → API tokens (docs/interface.md §2.4, §3, §4.3): create with a name and a scope, see the full token
 * once, list, revoke. The full token lives only in this component's state until the admin
 * dismisses it or leaves the page: never in storage, the URL or a log.
 */
import type { ComponentChildren, TargetedSubmitEvent } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, errorMessage, type Loop, type Token } from "./api.ts";
import { maskedToken, scopeLabel } from "./format.ts";
import {
  ConfirmDialog,
  CopyButton,
  Failure,
  fieldValue,
  Loading,
  PageTitle,
  Time,
  TrashIcon,
  useResource,
} from "./ui.tsx";

interface Minted {
  name: string;
  token: string;
}

export function TokensPage({ canManage }: { canManage: boolean }) {
  const tokens = useResource(() => api.tokens.list.query(), "tokens");
  const loops = useResource(() => api.loops.list.query(), "loops");
  const [minted, setMinted] = useState<Minted | null>(null);
  const [revoking, setRevoking] = useState<Token | null>(null);
  const [announcement, setAnnouncement] = useState("");

  function created(next: Minted) {
    setMinted(next);
    tokens.reload();
  }

  const revokedOne = useRef(false);
  function revoked(token: Token) {
    revokedOne.current = true;
    setAnnouncement(`Token “${token.name}” revoked. Requests that present it now fail.`);
    tokens.reload();
  }

  // The trash button that opened the dialog is gone once its token is revoked, so focus would
  // fall back to the page: put it on the list instead.
  function dialogClosed() {
    setRevoking(null);
    if (revokedOne.current) document.getElementById("token-list-title")?.focus();
    revokedOne.current = false;
  }

  return (
    <>
      <nav aria-label="Breadcrumb" class="breadcrumb">
        <span>Settings</span>
        <span aria-hidden="true"> › </span>
        <span aria-current="page">API tokens</span>
      </nav>
      <PageTitle title="API tokens">API tokens</PageTitle>
      <p class="lead">
        API tokens let your services trigger loops with <code>POST /loop/…</code>, and the CLI plan on this server. Give
        each service its own token so you can revoke one without touching the others.
      </p>
      {!canManage && (
        <div class="notice" role="note">
          Only owners and admins manage tokens.
        </div>
      )}
      {canManage && minted !== null && <MintedToken minted={minted} onDone={() => setMinted(null)} />}
      {canManage && minted === null && (
        <CreateTokenForm loops={loops.state === "ready" ? loops.value : []} onCreated={created} />
      )}
      <p class="visually-hidden" role="status">
        {announcement}
      </p>
      {canManage && (
        <section aria-labelledby="token-list-title">
          <h2 id="token-list-title" tabIndex={-1}>
            Tokens
          </h2>
          {tokens.state === "loading" && <Loading what="tokens" />}
          {tokens.state === "failed" && <Failure message={tokens.message} retry={tokens.reload} />}
          {tokens.state === "ready" && <TokenTable tokens={tokens.value} onRevoke={setRevoking} />}
        </section>
      )}
      {revoking !== null && <RevokeDialog token={revoking} onRevoked={revoked} onClose={dialogClosed} />}
    </>
  );
}

type ScopeKind = "all" | "one" | "none";

function ScopeChoice(props: {
  kind: ScopeKind;
  current: ScopeKind;
  onChoose: (kind: ScopeKind) => void;
  disabled?: boolean;
  children: ComponentChildren;
}) {
  return (
    <label class="choice">
      <input
        type="radio"
        name="scope"
        value={props.kind}
        checked={props.current === props.kind}
        disabled={props.disabled}
        onChange={() => props.onChoose(props.kind)}
      />
      {props.children}
    </label>
  );
}

function CreateTokenForm({ loops, onCreated }: { loops: Loop[]; onCreated: (minted: Minted) => void }) {
  const [scopeKind, setScopeKind] = useState<ScopeKind>("all");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: TargetedSubmitEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const name = fieldValue(form, "name").trim();
    const loopId = fieldValue(form, "loop");
    const planning = (form.elements.namedItem("planning") as HTMLInputElement | null)?.checked === true;
    if (name === "") return setError("Give the token a name.");
    if (scopeKind === "one" && loopId === "") return setError("Choose the loop this token may run.");
    const scopes = [
      ...(scopeKind === "all" ? ["loop:run"] : scopeKind === "one" ? [`loop:run:${loopId}`] : []),
      ...(planning ? ["cli:run"] : []),
    ];
    if (scopes.length === 0)
      return setError("Choose what the token may do: trigger loops, plan with the CLI, or both.");
    setBusy(true);
    setError(null);
    try {
      const created = await api.tokens.create.mutate({ name, scopes });
      onCreated({ name: created.name, token: created.token });
    } catch (failure) {
      setError(errorMessage(failure));
      setBusy(false);
    }
  }

  return (
    <form class="card create-token" onSubmit={submit} aria-labelledby="create-token-title" noValidate>
      <h2 id="create-token-title">Create a token</h2>
      <div class="field">
        <label for="token-name">Name</label>
        <input
          id="token-name"
          name="name"
          maxLength={100}
          required
          autoComplete="off"
          aria-describedby="token-name-hint"
          aria-invalid={error?.includes("name") ? true : undefined}
        />
        <p id="token-name-hint" class="hint">
          Where it will be used, e.g. “intake-service production”.
        </p>
      </div>
      <fieldset class="field">
        <legend>Loops it may trigger</legend>
        <ScopeChoice kind="all" current={scopeKind} onChoose={setScopeKind}>
          All loops <span class="muted">(loop:run)</span>
        </ScopeChoice>
        <ScopeChoice kind="one" current={scopeKind} onChoose={setScopeKind} disabled={loops.length === 0}>
          One loop <span class="muted">(loop:run:…)</span>
        </ScopeChoice>
        <div class="field nested">
          <label for="token-loop">Loop</label>
          <select id="token-loop" name="loop" disabled={scopeKind !== "one"}>
            {loops.map((loop) => (
              <option key={loop.id} value={loop.id}>
                {loop.name} ({loop.id})
              </option>
            ))}
          </select>
        </div>
        <ScopeChoice kind="none" current={scopeKind} onChoose={setScopeKind}>
          No loops
        </ScopeChoice>
      </fieldset>
      <fieldset class="field">
        <legend>Planning</legend>
        <label class="choice">
          <input type="checkbox" name="planning" aria-describedby="token-planning-hint" />
          CLI planning <span class="muted">(cli:run)</span>
        </label>
        <p id="token-planning-hint" class="hint">
          Lets the CLI ask this server for plans: <code>health login --token …</code>, then{" "}
          <code>health code --hosted</code>.
        </p>
      </fieldset>
      {error && (
        <p class="field-error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" disabled={busy}>
        {busy ? "Creating…" : "Create token"}
      </button>
    </form>
  );
}

function MintedToken({ minted, onDone }: { minted: Minted; onDone: () => void }) {
  const ref = useRef<HTMLElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return (
    <section class="card once" aria-labelledby="once-title" tabIndex={-1} ref={ref}>
      <h2 id="once-title">Copy your new token now</h2>
      <p class="warning" id="once-warning">
        <strong>This is the only time the full token is shown.</strong> It is not stored anywhere and cannot be
        recovered. If you lose it, create a new token and revoke this one.
      </p>
      <label for="new-token">Token “{minted.name}”</label>
      <div class="copy-row">
        <input
          id="new-token"
          class="mono"
          readOnly
          value={minted.token}
          autoComplete="off"
          spellcheck={false}
          aria-describedby="once-warning"
          onFocus={(event) => event.currentTarget.select()}
        />
        <CopyButton text={minted.token} label="Copy token" selectId="new-token" />
      </div>
      <button type="button" onClick={onDone}>
        I have copied it
      </button>
    </section>
  );
}

function TokenTable({ tokens, onRevoke }: { tokens: Token[]; onRevoke: (token: Token) => void }) {
  if (tokens.length === 0) return <p class="muted">No tokens yet.</p>;
  return (
    <table class="stack tokens">
      <caption class="visually-hidden">API tokens, newest first. Revoked tokens are kept for audit.</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Token</th>
          <th scope="col">Scope</th>
          <th scope="col">Created</th>
          <th scope="col">Last used</th>
          <th scope="col">
            <span class="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {tokens.map((token) => (
          <TokenRow key={token.id} token={token} onRevoke={onRevoke} />
        ))}
      </tbody>
    </table>
  );
}

function TokenRow({ token, onRevoke }: { token: Token; onRevoke: (token: Token) => void }) {
  const revoked = token.revokedAt !== null;
  // Struck through, and said in words for those who cannot see the line.
  const Strike = revoked ? "s" : "span";
  return (
    <tr class={revoked ? "revoked" : undefined} data-token-id={token.id}>
      <td data-label="Name">
        <span>
          <Strike class="token-name">{token.name}</Strike>
          {revoked && (
            <span class="badge revoked-badge">
              Revoked <Time iso={token.revokedAt} />
            </span>
          )}
        </span>
      </td>
      <td data-label="Token">
        <Strike class="mono nowrap">{maskedToken(token)}</Strike>
      </td>
      <td data-label="Scope">
        <Strike>{token.scopes.map(scopeLabel).join(", ")}</Strike>
      </td>
      <td data-label="Created">
        <Time iso={token.createdAt} />
      </td>
      <td data-label="Last used">
        {token.lastUsedAt === null ? <span class="muted">Never</span> : <Time iso={token.lastUsedAt} />}
      </td>
      <td class="actions">
        {!revoked && (
          <button
            type="button"
            class="icon danger"
            aria-label={`Revoke token ${token.name}`}
            title="Revoke"
            onClick={() => onRevoke(token)}
          >
            <TrashIcon />
          </button>
        )}
      </td>
    </tr>
  );
}

interface RevokeDialogProps {
  token: Token;
  onRevoked: (token: Token) => void;
  onClose: () => void;
}

function RevokeDialog({ token, onRevoked, onClose }: RevokeDialogProps) {
  return (
    <ConfirmDialog
      id="revoke-title"
      title={`Revoke “${token.name}”?`}
      action="Revoke token"
      busyAction="Revoking…"
      onConfirm={async () => {
        await api.tokens.revoke.mutate({ id: token.id });
        onRevoked(token);
      }}
      onClose={onClose}
    >
      <p>
        Anything using <span class="mono">{maskedToken(token)}</span> stops working with its next request. This cannot
        be undone: to restore access, create a new token.
      </p>
    </ConfirmDialog>
  );
}
