/** Pieces every screen uses: data loading, page headings, dialogs, copy buttons, status badges. */
import type { ComponentChildren, TargetedEvent } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { errorMessage, type RunStatus, type RunStep } from "./api.ts";
import { relativeTime } from "../core/relative-time.ts";
import { formatTime, prettyJson } from "./format.ts";

export type Resource<T> = { state: "loading" } | { state: "ready"; value: T } | { state: "failed"; message: string };

/** Loads once per change of `key`; `reload` fetches again and keeps showing the old value meanwhile. */
export function useResource<T>(load: () => Promise<T>, key: string): Resource<T> & { reload: () => void } {
  const [resource, setResource] = useState<Resource<T>>({ state: "loading" });
  const [generation, setGeneration] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    let current = true;
    loadRef.current().then(
      (value) => current && setResource({ state: "ready", value }),
      (error: unknown) => current && setResource({ state: "failed", message: errorMessage(error) }),
    );
    return () => {
      current = false;
    };
  }, [key, generation]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { ...resource, reload };
}

/**
 * The page's one h1. It takes focus after a navigation so a screen reader starts reading the
 * new page and the keyboard continues from its top.
 */
export function PageTitle({ children, title }: { children: ComponentChildren; title: string }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · health admin`;
  }, [title]);
  // Once per page: a title that fills in after loading must not pull focus back from where the user went.
  useEffect(() => ref.current?.focus(), []);
  return (
    <h1 id="page-title" tabIndex={-1} ref={ref}>
      {children}
    </h1>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" role="status">
      Loading {what}…
    </p>
  );
}

export function Failure({ message, retry }: { message: string; retry?: () => void }) {
  return (
    <div class="notice error" role="alert">
      <p>{message}</p>
      {retry && (
        <button type="button" class="secondary" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  );
}

interface ModalProps {
  labelledBy: string;
  onClose: () => void;
  children: ComponentChildren;
  /** What takes focus when the dialog opens. Default: the first focusable element. */
  initialFocus?: string;
}

/**
 * A native modal <dialog>: the browser traps focus inside, closes it on Escape, keeps the page
 * behind inert and returns focus to the opener. Mounted means open.
 */
export function Modal({ labelledBy, onClose, children, initialFocus }: ModalProps) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog === null) return;
    dialog.showModal();
    if (initialFocus !== undefined) dialog.querySelector<HTMLElement>(initialFocus)?.focus();
    return () => {
      if (dialog.open) dialog.close();
    };
  }, []);
  return (
    <dialog ref={ref} aria-labelledby={labelledBy} onClose={onClose}>
      {children}
    </dialog>
  );
}

interface ConfirmDialogProps {
  id: string;
  title: ComponentChildren;
  children: ComponentChildren;
  /** The destructive action's label, and its label while it runs. */
  action: string;
  busyAction: string;
  /** Does the work; a rejection is shown in the dialog and the dialog stays open. */
  onConfirm: () => Promise<void>;
  onClose: () => void;
}

/** A confirmation for a destructive action: Cancel has the focus, errors stay in the dialog. */
export function ConfirmDialog({ id, title, children, action, busyAction, onConfirm, onClose }: ConfirmDialogProps) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function confirm(event: { currentTarget: HTMLButtonElement }) {
    const button = event.currentTarget;
    setBusy(true);
    try {
      await onConfirm();
      closeDialogOf(button);
    } catch (failure) {
      setError(errorMessage(failure));
      setBusy(false);
    }
  }

  return (
    <Modal labelledBy={id} onClose={onClose} initialFocus=".cancel">
      <h2 id={id}>{title}</h2>
      {children}
      {error && (
        <p class="field-error" role="alert">
          {error}
        </p>
      )}
      <div class="dialog-actions">
        <button type="button" class="secondary cancel" onClick={(event) => closeDialogOf(event.currentTarget)}>
          Cancel
        </button>
        <button type="button" class="danger" disabled={busy} onClick={confirm}>
          {busy ? busyAction : action}
        </button>
      </div>
    </Modal>
  );
}

/** Closes the dialog around `element`; its close event tells the owner. */
export function closeDialogOf(element: Element | null): void {
  element?.closest("dialog")?.close();
}

/**
 * Copies with the Clipboard API. Where the browser refuses, it selects the text in `selectId`
 * instead so Ctrl+C or a long-press finishes the job.
 */
export function CopyButton({ text, label, selectId }: { text: string; label: string; selectId?: string }) {
  const [said, setSaid] = useState("");
  // The confirmation fades after a while so a second copy is confirmed again.
  useEffect(() => {
    if (said === "") return;
    const timer = setTimeout(() => setSaid(""), 4000);
    return () => clearTimeout(timer);
  }, [said]);
  async function copy() {
    try {
      await navigator.clipboard.writeText(text);
      setSaid("Copied");
    } catch {
      const field = selectId === undefined ? null : document.getElementById(selectId);
      if (field instanceof HTMLInputElement || field instanceof HTMLTextAreaElement) field.select();
      setSaid("Select and copy by hand");
    }
  }
  return (
    <span class="copy">
      <button type="button" class="secondary" onClick={copy} aria-label={label}>
        Copy
      </button>
      <span class="copy-said" role="status">
        {said}
      </span>
    </span>
  );
}

export function StatusBadge({ status }: { status: RunStatus | RunStep["status"] }) {
  return <span class={`badge status-${status}`}>{status}</span>;
}

/** One clock for every relative time on the page: they move on together, every 10 s. */
const clock = {
  listeners: new Set<(now: number) => void>(),
  timer: undefined as ReturnType<typeof setInterval> | undefined,
};

function useNow(): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    clock.listeners.add(setNow);
    clock.timer ??= setInterval(() => {
      const at = Date.now();
      for (const listener of clock.listeners) listener(at);
    }, 10_000);
    return () => {
      clock.listeners.delete(setNow);
      if (clock.listeners.size === 0) {
        clearInterval(clock.timer);
        clock.timer = undefined;
      }
    };
  }, []);
  return now;
}

/** "3 min ago", with the absolute time and its zone on hover (and to screen readers via `title`). */
export function Time({ iso }: { iso: string | null }) {
  const now = useNow();
  if (iso === null) return <span class="muted">—</span>;
  return (
    <time dateTime={iso} title={formatTime(iso)}>
      {relativeTime(iso, now)}
    </time>
  );
}

/** `name` marks the block for tests and styles; the section's heading says what it is. */
export function JsonBlock({ value, name }: { value: unknown; name: string }) {
  return (
    <pre class="json" data-json={name}>
      <code>{prettyJson(value)}</code>
    </pre>
  );
}

/** Reads a form field by name; the forms here are uncontrolled and read on submit. */
export function fieldValue(form: HTMLFormElement, name: string): string {
  const field = form.elements.namedItem(name);
  return field instanceof HTMLInputElement || field instanceof HTMLSelectElement || field instanceof HTMLTextAreaElement
    ? field.value
    : "";
}

export function TrashIcon() {
  return (
    <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" focusable="false">
      <path fill="currentColor" d="M9 3h6l1 2h4v2H4V5h4l1-2zm-3 6h12l-1 12H7L6 9zm4 2v8h2v-8h-2zm4 0v8h2v-8h-2z" />
    </svg>
  );
}

/** One filter of a list: a labelled select whose first choice, "", means no filter. */
export function FilterSelect({
  id,
  label,
  name,
  value,
  any,
  options,
  onChange,
}: {
  id: string;
  label: string;
  name: string;
  value: string;
  /** The label of the no-filter choice ("Any loop"). */
  any: string;
  options: ReadonlyArray<{ value: string; label: string }>;
  onChange: (name: string, value: string) => void;
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select
        id={id}
        name={name}
        value={value}
        onChange={(event: TargetedEvent<HTMLSelectElement>) => onChange(name, event.currentTarget.value)}
      >
        <option value="">{any}</option>
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </div>
  );
}
