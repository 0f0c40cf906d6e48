// The one rate mechanism (token-buckets.ts) on a clock the test holds: take, waitFor, reserve into debt, giveBack,
// the refill up to one second's worth, keys apart, unlimited, and the sweep of full buckets.
import { describe, expect, test } from "bun:test";
import { TokenBuckets } from "./token-buckets";

describe("TokenBuckets", () => {
  test("a second's worth at once, then refilled by the clock, never beyond a second's worth", () => {
    let now = 0;
    const b = new TokenBuckets(() => now);
    for (let i = 0; i < 5; i++) expect(b.take("h", 1, 5)).toBe(true);
    expect(b.take("h", 1, 5)).toBe(false); // nothing taken by a refusal
    now += 200; // one token
    expect(b.take("h", 1, 5)).toBe(true);
    expect(b.take("h", 1, 5)).toBe(false);
    now += 60_000; // a minute idle: still one second's worth
    for (let i = 0; i < 5; i++) expect(b.take("h", 1, 5)).toBe(true);
    expect(b.take("h", 1, 5)).toBe(false);
    // another key has its own bucket; 0 = unlimited
    expect(b.take("other", 5, 5)).toBe(true);
    for (let i = 0; i < 100; i++) expect(b.take("h", 1, 0)).toBe(true);
  });

  test("reserve goes into debt: the next waits behind it; giveBack returns what was not used", () => {
    let now = 0;
    const b = new TokenBuckets(() => now);
    expect(b.waitFor("u", 1000, 1000)).toBe(0);
    b.reserve("u", 1000, 1000);
    expect(b.waitFor("u", 500, 1000)).toBe(500);
    b.reserve("u", 500, 1000); // -500
    expect(b.waitFor("u", 500, 1000)).toBe(1000); // behind the debt
    b.giveBack("u", 500); // the 500 were not written
    expect(b.waitFor("u", 500, 1000)).toBe(500);
    now += 500;
    expect(b.waitFor("u", 500, 1000)).toBe(0);
  });

  test("when the map is full, full buckets are dropped and the others kept", () => {
    let now = 0;
    const b = new TokenBuckets(() => now, 3);
    b.reserve("a", 10, 10); // empty
    b.take("b", 0, 10); // full
    b.take("c", 0, 10); // full
    b.take("d", 0, 10); // sweeps b and c
    expect(b.waitFor("a", 10, 10)).toBe(1000); // a kept its state
  });
});
