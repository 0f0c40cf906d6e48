// safeNext: the `next` parameter after sign-in may only name a path of this app (supplement §28.1, issue 29 C).
import { describe, expect, test } from "bun:test";
import { safeNext } from "./safe-next";

const ORIGIN = "https://secbox.example";
/** Where the browser would go if the app navigated to `to` from a page of ORIGIN. */
const lands = (to: string) => new URL(to, `${ORIGIN}/signin`).origin;

describe("safeNext", () => {
  test("paths of the app are kept, query and fragment included", () => {
    for (const path of ["/", "/responders", "/responders/0193-abc?page=2&sort=name", "/trackers#logs", "/a%2Fb", "/search?q=%2F%2Fx"])
      expect([path, safeNext(path, ORIGIN)]).toEqual([path, path]);
  });

  test("nothing is absolute, empty or relative: the home page instead", () => {
    for (const bad of [
      null,
      "",
      "https://evil.example/",
      "//evil.example",
      "/\\evil.example",
      "\\\\evil.example",
      "javascript:alert(1)",
      "responders",
      " /x",
      "http:/evil.example",
    ])
      expect([bad, safeNext(bad, ORIGIN)]).toEqual([bad, "/"]);
  });

  test("tab, CR and LF are removed before the check (the URL parser drops them: /<TAB>/host is //host)", () => {
    // URLSearchParams decodes /%09/evil.example to "/\t/evil.example".
    for (const bad of [
      "/\t/evil.example",
      "/\n/evil.example",
      "/\r\n/evil.example",
      "\t//evil.example",
      "/\t\\evil.example",
      "/\\\t\\evil.example",
    ]) {
      const out = safeNext(bad, ORIGIN);
      expect([bad, out]).toEqual([bad, "/"]);
    }
    // A same-app path with a stray tab still goes where the browser would go, without the tab.
    expect(safeNext("/respon\tders", ORIGIN)).toBe("/responders");
  });

  test("whatever it answers stays on the origin", () => {
    const tries = [
      "/%09/evil.example",
      "/\t/evil.example",
      "/.//evil.example",
      "/..//evil.example",
      "/x/../../evil.example",
      "/\u0000//evil.example",
      "/ /evil.example",
    ];
    for (const t of tries) expect([t, lands(safeNext(t, ORIGIN))]).toEqual([t, ORIGIN]);
  });
});
