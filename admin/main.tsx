/**
 * The admin console: who is signed in decides between the sign-in form and the screens, and the
 * URL decides the screen. Everything goes through the typed tRPC client in api.ts.
 */
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, errorCode, errorMessage, type Me, onSignedOut } from "./api.ts";
import { DevicePage } from "./device.tsx";
import { LoopPage, LoopsPage } from "./loops.tsx";
import { Link, paths, parseRoute, type Route, usePathname } from "./router.tsx";
import { RunPage, RunsPage } from "./runs.tsx";
import { SignIn } from "./sign-in.tsx";
import { TokensPage } from "./tokens.tsx";
import { UsagePage } from "./usage.tsx";
import { Failure, PageTitle } from "./ui.tsx";

type Session =
  | { state: "checking" }
  | { state: "signed-out"; needsSetup: boolean }
  | { state: "signed-in"; me: Me }
  | { state: "unreachable"; message: string };

async function checkSession(): Promise<Session> {
  try {
    return { state: "signed-in", me: await api.auth.me.query() };
  } catch (error) {
    if (errorCode(error) !== "UNAUTHORIZED") return { state: "unreachable", message: errorMessage(error) };
    const status = await api.auth.status.query();
    return { state: "signed-out", needsSetup: status.needsSetup };
  }
}

function App() {
  const [session, setSession] = useState<Session>({ state: "checking" });
  const [generation, setGeneration] = useState(0);

  useEffect(() => {
    let current = true;
    checkSession().then(
      (next) => current && setSession(next),
      (error: unknown) => current && setSession({ state: "unreachable", message: errorMessage(error) }),
    );
    return () => {
      current = false;
    };
  }, [generation]);

  // A call answered UNAUTHORIZED while signed in means the session ended: show the sign-in form
  // again. Before sign-in, the start-up check decides between sign-in and first-admin setup.
  useEffect(
    () =>
      onSignedOut(() =>
        setSession((previous) =>
          previous.state === "signed-in" ? { state: "signed-out", needsSetup: false } : previous,
        ),
      ),
    [],
  );

  const recheck = () => setGeneration((g) => g + 1);
  switch (session.state) {
    case "checking":
      return (
        <main id="main" class="sign-in">
          <p class="muted" role="status">
            Loading…
          </p>
        </main>
      );
    case "unreachable":
      return (
        <main id="main" class="sign-in">
          <Failure message={session.message} retry={recheck} />
        </main>
      );
    case "signed-out":
      return <SignIn needsSetup={session.needsSetup} onSignedIn={recheck} />;
    case "signed-in":
      return <Shell me={session.me} onSignedOut={() => setSession({ state: "signed-out", needsSetup: false })} />;
  }
}

const NAV: Array<{ label: string; href: string; routes: Route["name"][] }> = [
  { label: "Loops", href: paths.loops(), routes: ["loops", "loop"] },
  { label: "Runs", href: paths.runs(), routes: ["runs", "run"] },
  { label: "Usage", href: paths.usage(), routes: ["usage"] },
  { label: "Settings", href: paths.tokens(), routes: ["tokens"] },
  { label: "Device login", href: paths.device(), routes: ["device"] },
];

function Shell({ me, onSignedOut: signedOut }: { me: Me; onSignedOut: () => void }) {
  const route = parseRoute(usePathname());
  const canManage = me.role !== "member";

  async function signOut() {
    try {
      await api.auth.logout.mutate();
    } finally {
      signedOut();
    }
  }

  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="top">
        <Link class="brand-mark" href={paths.loops()}>
          health <span>admin</span>
        </Link>
        <nav aria-label="Main">
          <ul>
            {NAV.map((item) => (
              <li key={item.href}>
                <Link href={item.href} aria-current={item.routes.includes(route.name) ? "page" : undefined}>
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span class="who-email" title={`${me.email} (${me.role}) in ${me.org.name}`}>
            {me.email}
          </span>
          <button type="button" class="secondary small" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <Screen route={route} me={me} canManage={canManage} />
      </main>
    </>
  );
}

function Screen({ route, me, canManage }: { route: Route; me: Me; canManage: boolean }) {
  switch (route.name) {
    case "loops":
      return <LoopsPage />;
    case "loop":
      return <LoopPage key={route.loopId} loopId={route.loopId} canRun={canManage} />;
    case "runs":
      return <RunsPage />;
    case "run":
      return <RunPage key={route.runId} runId={route.runId} canTerminate={canManage} />;
    case "usage":
      return <UsagePage />;
    case "tokens":
      return <TokensPage canManage={canManage} />;
    case "device":
      return <DevicePage me={me} />;
    case "not-found":
      return (
        <>
          <PageTitle title="Not found">Not found</PageTitle>
          <p>
            There is no such page. Go to <Link href={paths.loops()}>Loops</Link>.
          </p>
        </>
      );
  }
}

const root = document.getElementById("app");
if (root !== null) {
  root.textContent = "";
  render(<App />, root);
}
