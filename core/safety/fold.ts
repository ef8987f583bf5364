/**
 * The one text folding both the classifier and the vocabulary filters use: NFKC (full-width
 * letters become ASCII), invisible format characters removed ("diag\u200Bnose"), curly quotes
 * straightened, accents stripped ("Nguyễn" → "nguyen"), lower case. Plain ASCII, the common
 * case, only pays for `toLowerCase`.
 */

const NON_ASCII = /[^\x00-\x7f]/;

/** Whether `text` is all ASCII: by hand for a word (most calls), where the pattern's set-up costs more than the loop. */
function isAscii(text: string): boolean {
  if (text.length > 32) return !NON_ASCII.test(text);
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

export function fold(text: string): string {
  if (isAscii(text)) return text.toLowerCase();
  return text
    .normalize("NFKC")
    .replace(/\p{Cf}/gu, "")
    .replace(/[‘’ʼ`´]/g, "'")
    .replace(/[“”„«»]/g, '"')
    .normalize("NFD")
    .replace(/\p{M}/gu, "")
    .toLowerCase();
}
