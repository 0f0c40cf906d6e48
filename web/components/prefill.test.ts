import { expect, test } from "bun:test";
import { dropDoubledScheme, dropDoubledSlash } from "./prefill";

test("a scheme pasted after the prefilled one replaces it; anything else is left alone", () => {
  expect(dropDoubledScheme("https://http://localhost:8080/x")).toBe("http://localhost:8080/x");
  expect(dropDoubledScheme("https://https://example.com/")).toBe("https://example.com/");
  expect(dropDoubledScheme("https://HTTP://example.com/")).toBe("HTTP://example.com/");
  expect(dropDoubledScheme("https://example.com/?next=http://x")).toBe("https://example.com/?next=http://x");
  expect(dropDoubledScheme("https://")).toBe("https://");
  expect(dropDoubledScheme("https://exa")).toBe("https://exa");
});

test("a path typed with its own / after the prefilled one keeps one", () => {
  expect(dropDoubledSlash("//orders")).toBe("/orders");
  expect(dropDoubledSlash("///orders/1")).toBe("/orders/1");
  expect(dropDoubledSlash("/orders//1")).toBe("/orders//1");
  expect(dropDoubledSlash("/")).toBe("/");
});
