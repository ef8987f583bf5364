/**
 * Sign-in, and the one-time creation of the first admin with the setup code the server printed
 * at start. Both end with the server setting the httpOnly session cookie; the session secret in
 * the answer is for the CLI and is dropped here.
 */
import { useEffect, useState } from "preact/hooks";
import type { TargetedSubmitEvent } from "preact";
import { api, errorMessage } from "./api.ts";
import { fieldValue } from "./ui.tsx";

interface SignInProps {
  needsSetup: boolean;
  onSignedIn: () => void;
}

export function SignIn({ needsSetup, onSignedIn }: SignInProps) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const title = needsSetup ? "Create the first admin" : "Sign in";

  useEffect(() => {
    document.title = `${title} · health admin`;
  }, [title]);

  async function submit(event: TargetedSubmitEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const email = fieldValue(form, "email");
    const password = fieldValue(form, "password");
    setBusy(true);
    setError(null);
    try {
      if (needsSetup) await api.auth.setup.mutate({ code: fieldValue(form, "code").trim(), email, password });
      else await api.auth.login.mutate({ email, password });
      onSignedIn();
    } catch (failure) {
      setError(errorMessage(failure));
      setBusy(false);
    }
  }

  return (
    <main id="main" class="sign-in">
      <form
        class="card"
        onSubmit={submit}
        aria-labelledby="sign-in-title"
        aria-describedby={error ? "sign-in-error" : undefined}
      >
        <p class="brand-mark" aria-hidden="true">
          health <span>admin</span>
        </p>
        <h1 id="sign-in-title">{title}</h1>
        {needsSetup && (
          <p class="muted">
            Use the one-time setup code the server printed when it started. You'll be signed in as this admin.
          </p>
        )}
        {needsSetup && (
          <div class="field">
            <label for="setup-code">Setup code</label>
            <input id="setup-code" name="code" required autoComplete="off" spellcheck={false} />
          </div>
        )}
        <div class="field">
          <label for="email">Email</label>
          <input id="email" name="email" type="email" required autoComplete="username" />
        </div>
        <div class="field">
          <label for="password">Password</label>
          <input
            id="password"
            name="password"
            type="password"
            required
            minLength={needsSetup ? 12 : undefined}
            autoComplete={needsSetup ? "new-password" : "current-password"}
            aria-describedby={needsSetup ? "password-hint" : undefined}
          />
          {needsSetup && (
            <p id="password-hint" class="hint">
              At least 12 characters.
            </p>
          )}
        </div>
        {error && (
          <p id="sign-in-error" class="field-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? "Signing in…" : needsSetup ? "Create admin and sign in" : "Sign in"}
        </button>
      </form>
    </main>
  );
}
