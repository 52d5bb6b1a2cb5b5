import { test } from "node:test";
import assert from "node:assert/strict";
import { slugify, wordCount } from "../src/textkit.js";

test("slugify joins words with dashes", () => {
  assert.equal(slugify("Hello, World!"), "hello-world");
});

test("slugify drops accents", () => {
  assert.equal(slugify("Crème brûlée"), "creme-brulee");
});

test("wordCount counts words", () => {
  assert.equal(wordCount("  one two\tthree\n"), 3);
});

test("wordCount of blank text is zero", () => {
  assert.equal(wordCount("   "), 0);
});
