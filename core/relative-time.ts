/**
 * "in 58 s", "3 min ago", "2 h ago", "in 4 days", "just now": how far a time is from now. The CLI
 * and the console both say times this way, with the absolute time beside it or on hover.
 */
export function relativeTime(iso: string | null | undefined, now = Date.now()): string {
  if (iso === null || iso === undefined) return "never";
  const at = new Date(iso).getTime();
  if (Number.isNaN(at)) return iso;
  const seconds = Math.round((at - now) / 1_000);
  const size = Math.abs(seconds);
  if (size < 5) return "just now";
  const span =
    size < 60
      ? `${size} s`
      : size < 3_600
        ? `${Math.round(size / 60)} min`
        : size < 48 * 3_600
          ? `${Math.round(size / 3_600)} h`
          : `${Math.round(size / 86_400)} days`;
  return seconds > 0 ? `in ${span}` : `${span} ago`;
}
