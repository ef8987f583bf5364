/** Argument helpers citty does not have. */

/**
 * Every value of a repeatable option (`--scope a --scope b`, `--scope=c`). citty keeps only the
 * last one, so the raw arguments are read again.
 */
export function repeated(rawArgs: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i];
    if (arg === "--") break;
    if (arg === `--${name}`) {
      const value = rawArgs[i + 1];
      if (value !== undefined) values.push(value);
      i++;
    } else if (arg?.startsWith(`--${name}=`)) {
      values.push(arg.slice(name.length + 3));
    }
  }
  return values;
}
