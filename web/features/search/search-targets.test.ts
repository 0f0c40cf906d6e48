// Where search results open, and how they are grouped: every type the search API knows has a target.
import { describe, expect, test } from "bun:test";
import { SEARCH_TYPES } from "../../../src/features/search/service";
import { groupResults, matchNote, SEARCH_TARGETS, type SearchItem } from "./search-targets";

describe("search targets", () => {
  test("every type of the API has a page, and no other", () => {
    expect(Object.keys(SEARCH_TARGETS).sort()).toEqual([...SEARCH_TYPES].sort());
  });

  test("groups follow the navigation order and keep the API's rank order inside", () => {
    const items: SearchItem[] = [
      { type: "script", id: "s1", name: "b", matched: "name" },
      { type: "responder", id: "r1", name: "z", matched: "content" },
      { type: "script", id: "s2", name: "a", matched: "content" },
      { type: "tag", id: "t1", name: "x", matched: "id" },
    ];
    const g = groupResults(items);
    expect(g.map((x) => x.target.group)).toEqual(["Responders", "Scripts", "Tags"]);
    expect(g[1]!.items.map((i) => i.id)).toEqual(["s1", "s2"]);
    expect(g.map((x) => x.target.href(x.items[0]!.id))).toEqual(["/responders/r1", "/scripts/s1", "/tags?edit=t1"]);
    expect(items.map(matchNote)).toEqual([null, "in path", "in source", "id"]);
  });
});
