/**
 * The one text folding both the classifier and the vocabulary filters use: NFKC (full-width
 * letters become ASCII), invisible format characters removed ("diag\u200Bnose"), curly quotes
 * straightened, accents stripped ("Nguyễn" → "nguyen"), lower case. Plain ASCII, the common
 * case, only pays for `toLowerCase`.
 */

const NON_ASCII = /[^\x00-\x7f]/;

export function fold(text: string): string {
  if (!NON_ASCII.test(text)) return text.toLowerCase();
  return text
    .normalize("NFKC")
    .replace(/\p{Cf}/gu, "")
    .replace(/[‘’ʼ`´]/g, "'")
    .replace(/[“”„«»]/g, '"')
    .normalize("NFD")
    .replace(/\p{M}/gu, "")
    .toLowerCase();
}
