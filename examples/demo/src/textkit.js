/**
 * Turns a title into a URL slug: lower case, ASCII letters and digits, words joined by dashes.
 * @param {string} text
 * @returns {string}
 */
export function slugify(text) {
  return text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

/**
 * Counts the words of a text; a word is a run of non-space characters.
 * @param {string} text
 * @returns {number}
 */
export function wordCount(text) {
  const words = text.trim().split(/\s+/);
  return words[0] === "" ? 0 : words.length;
}
