/**
 * A small History API router: the console has seven screens, which does not justify a routing
 * library. The server answers every /admin/* path with the same index, so any URL here can be
 * bookmarked or reloaded.
 */
import type { ComponentChildren, TargetedMouseEvent } from "preact";
import { useEffect, useState } from "preact/hooks";

export const BASE = "/admin";

export type Route =
  | { name: "loops" }
  | { name: "loop"; loopId: string }
  | { name: "runs" }
  | { name: "run"; runId: string }
  | { name: "usage" }
  | { name: "tokens" }
  | { name: "device" }
  | { name: "not-found" };

export const paths = {
  loops: () => `${BASE}/loops`,
  loop: (loopId: string) => `${BASE}/loops/${encodeURIComponent(loopId)}`,
  /** The runs list, filtered by the non-empty values of `filter`. */
  runs: (filter: Record<string, string> = {}) => {
    const query = new URLSearchParams(Object.entries(filter).filter(([, value]) => value !== "")).toString();
    return `${BASE}/runs${query === "" ? "" : `?${query}`}`;
  },
  run: (runId: string) => `${BASE}/runs/${encodeURIComponent(runId)}`,
  /** The usage page, with the non-empty values of `filter` (window, token, loop). */
  usage: (filter: Record<string, string> = {}) => {
    const query = new URLSearchParams(Object.entries(filter).filter(([, value]) => value !== "")).toString();
    return `${BASE}/usage${query === "" ? "" : `?${query}`}`;
  },
  tokens: () => `${BASE}/settings/tokens`,
  /** The approval page of `health login`; the server links here with `?code=`. */
  device: () => `${BASE}/device`,
};

export function parseRoute(pathname: string): Route {
  const rest = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : pathname;
  const parts = rest
    .split("/")
    .filter((part) => part !== "")
    .map(decodeURIComponent);
  const [first, second, ...more] = parts;
  if (more.length > 0) return { name: "not-found" };
  if (first === undefined) return { name: "loops" };
  if (first === "loops") return second === undefined ? { name: "loops" } : { name: "loop", loopId: second };
  if (first === "runs") return second === undefined ? { name: "runs" } : { name: "run", runId: second };
  if (first === "usage" && second === undefined) return { name: "usage" };
  if (first === "settings" && (second === undefined || second === "tokens")) return { name: "tokens" };
  if (first === "device" && second === undefined) return { name: "device" };
  return { name: "not-found" };
}

const NAVIGATED = "health:navigated";

export function navigate(path: string): void {
  if (path === location.pathname + location.search) return;
  history.pushState(null, "", path);
  window.dispatchEvent(new Event(NAVIGATED));
}

/** The current pathname, updated on navigate() and on the browser's back and forward. */
export function usePathname(): string {
  const [pathname, setPathname] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPathname(location.pathname);
    window.addEventListener("popstate", update);
    window.addEventListener(NAVIGATED, update);
    return () => {
      window.removeEventListener("popstate", update);
      window.removeEventListener(NAVIGATED, update);
    };
  }, []);
  return pathname;
}

interface LinkProps {
  href: string;
  children: ComponentChildren;
  class?: string;
  "aria-current"?: "page";
}

/** A real link (open in a new tab works) that navigates in place on a plain click. */
export function Link({ href, children, ...rest }: LinkProps) {
  function followInPlace(event: TargetedMouseEvent<HTMLAnchorElement>) {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  }
  return (
    <a {...rest} href={href} onClick={followInPlace}>
      {children}
    </a>
  );
}
