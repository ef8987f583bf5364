/** A secret with its last character changed, always to another one (a random secret may end in "x"). */
export const tampered = (secret: string): string => `${secret.slice(0, -1)}${secret.endsWith("x") ? "y" : "x"}`;
