// Pure host / path-form parsing and matching rules (supplement §11.3, §11.4); the same rules are exercised
// end to end in responders.hits.test.ts.
import { describe, expect, test } from "bun:test";
import { byPrecedence, findWinner, locationMatches, matchPath, parsePathForm, parseResponderHost, splitUrl, type Matchable } from "./match";

describe("parseResponderHost", () => {
  const parse = (h: string | null) => parseResponderHost(h, ".localhost");
  test("handle, prefix split at the last dash, any case, any port", () => {
    expect(parse("abc123.localhost")).toEqual({ handle: "abc123", prefix: "" });
    expect(parse("ABC123.LocalHost:7070")).toEqual({ handle: "abc123", prefix: "" });
    expect(parse("shop-abc123.localhost:1")).toEqual({ handle: "abc123", prefix: "shop" });
    expect(parse("my-shop-abc123.localhost")).toEqual({ handle: "abc123", prefix: "my-shop" });
    expect(parse("-abc123.localhost")).toEqual({ handle: "abc123", prefix: null });
  });
  test("a trailing dot (the absolute form of the name) is the same host", () => {
    expect(parse("abc123.localhost.")).toEqual({ handle: "abc123", prefix: "" });
    expect(parse("Shop-ABC123.localhost.:7070")).toEqual({ handle: "abc123", prefix: "shop" });
    for (const h of ["localhost.", "abc.localhost.."]) expect(parse(h), h).toBeUndefined();
  });
  test("not responder hosts", () => {
    for (const h of [
      null,
      "localhost",
      "localhost:7070",
      ".localhost",
      "a.b.localhost",
      "abc.example.com",
      "[::1]:7070",
      "127.0.0.1",
      "abclocalhost",
    ])
      expect(parse(h), String(h)).toBeUndefined();
  });
});

describe("parsePathForm and splitUrl", () => {
  test("handle and rest; responders and empty are not handles", () => {
    expect(parsePathForm("/api/webhooks/abc")).toEqual({ handle: "abc", path: "/" });
    expect(parsePathForm("/api/webhooks/ABC/")).toEqual({ handle: "abc", path: "/" });
    expect(parsePathForm("/api/webhooks/abc/x/Y%2F")).toEqual({ handle: "abc", path: "/x/Y%2F" });
    expect(parsePathForm("/api/webhooks/responders")).toBeUndefined();
    expect(parsePathForm("/api/webhooks/responders/x")).toBeUndefined();
    expect(parsePathForm("/api/webhooks/")).toBeUndefined();
    expect(parsePathForm("/api/webhooks")).toBeUndefined();
    expect(parsePathForm("/api/status")).toBeUndefined();
  });
  test("splitUrl keeps the raw path and query", () => {
    expect(splitUrl("http://h:1/a%2Fb?x=1&y")).toEqual({ path: "/a%2Fb", rawQuery: "x=1&y" });
    expect(splitUrl("http://h/")).toEqual({ path: "/", rawQuery: "" });
    expect(splitUrl("http://h")).toEqual({ path: "/", rawQuery: "" });
    expect(splitUrl("example.com:443")).toEqual({ path: "/", rawQuery: "" });
    expect(splitUrl("/cap?x=1")).toEqual({ path: "/cap", rawQuery: "x=1" });
  });
});

describe("matching", () => {
  test("matchPath strips trailing slashes (not /) and lower-cases", () => {
    expect(matchPath("/A/B//")).toBe("/a/b");
    expect(matchPath("/")).toBe("/");
    expect(matchPath("//")).toBe("/");
  });
  test("location types", () => {
    expect(locationMatches("=", "/a", "/a")).toBe(true);
    expect(locationMatches("=", "/a", "/a/b")).toBe(false);
    expect(locationMatches("*", "/a", "/a/b")).toBe(true);
    expect(locationMatches("*", "/a", "/ab")).toBe(false);
    expect(locationMatches("*", "/", "/anything")).toBe(true);
    expect(locationMatches("^", "/api", "/apix")).toBe(true);
    expect(locationMatches("^", "/api", "/ap")).toBe(false);
  });
  test("precedence: longest path, then = before * before ^; HEAD only matches HEAD and ANY", () => {
    const items: (Matchable & { id: string })[] = [
      { id: "caret", method: "ANY", pathType: "^", pathLower: "/same" },
      { id: "star", method: "ANY", pathType: "*", pathLower: "/same" },
      { id: "eq", method: "ANY", pathType: "=", pathLower: "/same" },
      { id: "long", method: "ANY", pathType: "^", pathLower: "/same/longer" },
      { id: "get", method: "GET", pathType: "=", pathLower: "/get" },
    ];
    const list = items.sort(byPrecedence);
    expect(findWinner(list, "GET", "/same")?.id).toBe("eq");
    expect(findWinner(list, "GET", "/same/x")?.id).toBe("star");
    expect(findWinner(list, "GET", "/samex")?.id).toBe("caret");
    expect(findWinner(list, "GET", "/same/longer/x")?.id).toBe("long");
    expect(findWinner(list, "GET", "/get")?.id).toBe("get");
    expect(findWinner(list, "HEAD", "/get")).toBeUndefined();
    expect(findWinner(list, "POST", "/other")).toBeUndefined();
  });
});
